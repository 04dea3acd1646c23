"""``StrategyHistory``: the EvoX scaffold's Memory — every finalised strategy with its score J.

The meta side's parent is the argmax-J strategy (non-numeric J counts as −inf; ties go to the
first recorded), and its context is a seeded ``sample(all, min(2, n))`` with the parent removed
(so it may hold fewer than two), as the reference's ``SearchStrategyDatabase`` does.  Nothing is
rendered into solution prompts; the history feeds only strategy rewrites.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from harness.core.memory import BaseMemory
from harness.core.rng import rng_from_state, rng_state

__all__ = ["StrategyHistory", "StrategyRecord"]


@dataclass
class StrategyRecord:
    id: str
    source: str
    #: J and its window (see :meth:`scaffolds.evox.scoring.WindowScorer.metrics`).
    metrics: dict[str, Any] = field(default_factory=dict)
    #: The strategy it was rewritten from ("" for the seed).
    parent_id: str = ""
    deployed_iteration: int = 0
    finalized_iteration: int | None = None
    #: Population descriptor when the strategy was deployed and when it was scored.
    start_state: str = ""
    end_state: str = ""

    @property
    def score(self) -> float:
        value = self.metrics.get("combined_score")
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            return float(value)
        return float("-inf")


class StrategyHistory(BaseMemory):
    def __init__(self, rng: random.Random, *, context_size: int = 2) -> None:
        self.rng = rng
        self.context_size = context_size
        self.records: list[StrategyRecord] = []

    def add(self, record: StrategyRecord) -> None:
        self.records.append(record)

    def __len__(self) -> int:
        return len(self.records)

    def get(self, strategy_id: str) -> StrategyRecord | None:
        return next((r for r in self.records if r.id == strategy_id), None)

    def best(self) -> StrategyRecord | None:
        best: StrategyRecord | None = None
        for record in self.records:
            if best is None or record.score > best.score:
                best = record
        return best

    def context(self, parent: StrategyRecord) -> list[StrategyRecord]:
        drawn = self.rng.sample(self.records, min(self.context_size, len(self.records)))
        return [r for r in drawn if r.id != parent.id]

    def state_dict(self) -> dict[str, Any]:
        return {"rng": rng_state(self.rng), "records": [asdict(r) for r in self.records]}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        rng_from_state(self.rng, state["rng"])
        self.records = [StrategyRecord(**r) for r in state.get("records") or []]
