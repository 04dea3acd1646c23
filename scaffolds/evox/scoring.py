"""Strategy score J, its window, and the stagnation trigger (SkyDiscover §2.6.5-2.6.6).

    J = (s_end − s_start) · (1 + ln(1 + max(0, s_start))) / √H

``s_start`` is the best score when the window opened, ``s_end`` the best seen in it (never
below ``s_start``, so J ≥ 0), ``H`` the switch interval — a fixed horizon even when a strategy
ran longer (the reference's intentional bonus for long-lived improving strategies).

Stagnation is the reference's per-step consecutive counter: a step whose best-score gain over
the previous step is at most the threshold (0.01 absolute) counts; a larger gain resets it; slow
gains that add up still count as stagnation.  Reaching the switch interval fires the trigger
and resets the counter.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Stagnation", "WindowScorer", "switch_interval", "window_score"]

IMPROVEMENT_THRESHOLD = 0.01
SWITCH_RATIO = 0.10


def switch_interval(max_iterations: int, configured: int | None = None) -> int:
    """``configured`` if set, else ``max(1, int(0.1 · max_iterations))``."""
    return configured if configured else max(1, int(max_iterations * SWITCH_RATIO))


def window_score(start: float, end: float, horizon: int) -> float:
    """J for a window that opened at best score ``start`` and reached ``end``."""
    end = max(start, end)
    weight = 1.0 + math.log(1.0 + max(0.0, start))
    return (end - start) * weight / math.sqrt(max(1, int(horizon)))


@dataclass
class WindowScorer:
    """The window of the strategy currently being scored: its start and the bests per step."""

    start_score: float | None = None
    start_iteration: int | None = None
    bests: list[float] = field(default_factory=list)

    def reset(self, start_score: float, start_iteration: int | None = None) -> None:
        self.start_score = float(start_score)
        self.start_iteration = start_iteration
        self.bests = []

    def record_step(self, best: float) -> None:
        if self.start_score is None:
            self.reset(best)
        self.bests.append(float(best))

    def metrics(self, horizon: int, *, current_best: float | None = None) -> dict[str, Any]:
        """J and its parts; an empty window is scored on ``[current_best]``."""
        start = self.start_score or 0.0
        steps = self.bests or ([current_best] if current_best is not None else [])
        end = max([start, *steps])
        return {
            "combined_score": window_score(start, end, horizon),
            "window_start_iteration": self.start_iteration,
            "search_window_start_score": start,
            "search_window_end_score": end,
            "search_horizon": int(horizon),
            "steps": len(self.bests),
        }

    def state_dict(self) -> dict[str, Any]:
        return {
            "start": self.start_score,
            "start_iteration": self.start_iteration,
            "bests": list(self.bests),
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.start_score = state.get("start")
        self.start_iteration = state.get("start_iteration")
        self.bests = [float(b) for b in state.get("bests") or []]


@dataclass
class Stagnation:
    interval: int
    threshold: float = IMPROVEMENT_THRESHOLD
    count: int = 0
    last_best: float | None = None

    def step(self, best: float) -> bool:
        """Record this step's best score; True when a strategy switch is due."""
        if self.last_best is None or best - self.last_best > self.threshold:
            self.count = 0
        else:
            self.count += 1
        self.last_best = best
        if self.count >= self.interval:
            self.count = 0
            return True
        return False

    def state_dict(self) -> dict[str, Any]:
        return {"count": self.count, "last_best": self.last_best}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.count = int(state.get("count", 0))
        self.last_best = state.get("last_best")
