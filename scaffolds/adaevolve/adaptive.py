"""AdaEvolve's adaptive state: per-island G signal and intensity, and the UCB bandit over islands.

Numbers as the reference's code (SkyDiscover ``adaptation.py``; audit §3.1.1 and §3.1.5):

- ``G ← ρ·G + (1 − ρ)·δ²`` only when a fitness beats the island's best, with
  ``δ = min((f − best)/(|best| + ε), 1)`` (``δ = 1`` for the island's first evaluation); a
  non-improving evaluation counts but leaves G alone.
- ``I = I_min + (I_max − I_min)/(1 + √(G + ε))``.
- A regular evaluation on island i: raw visits + 1, ``V ← ρ·V + 1``, ``R ← ρ·R + δ_g`` where
  ``δ_g`` normalises the gain over the island's previous best by the *global* best.  An external
  improvement (migrant, seed copy) moves best and G only.
- Pick: any island with fewer than ``min_visits`` raw visits → a uniform draw among them (it
  draws even for one candidate, as ``random.choice`` does); else the first argmax of
  ``R/V + C·√(ln(t + 1)/visits)``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

__all__ = ["EPSILON", "AdaptiveState", "IslandBandit"]

EPSILON = 1e-8


def _normalised(delta: float, best: float) -> float:
    if math.isinf(best):
        return 1.0
    return min(delta / (abs(best) + EPSILON), 1.0)


@dataclass
class AdaptiveState:
    """One island's improvement signal."""

    decay: float
    intensity_min: float
    intensity_max: float
    signal: float = 0.0  # G
    best: float = float("-inf")
    improvements: int = 0
    evaluations: int = 0

    def record(self, fitness: float) -> float:
        """A regular evaluation; returns the locally normalised gain (0 if none)."""
        self.evaluations += 1
        if fitness <= self.best:
            return 0.0
        self.improvements += 1
        return self._improve(fitness)

    def receive(self, fitness: float) -> float:
        """An improvement the island did not earn (migration, seeding): best and G only."""
        if fitness <= self.best:
            return 0.0
        return self._improve(fitness)

    def _improve(self, fitness: float) -> float:
        delta = _normalised(fitness - self.best, self.best)
        self.best = fitness
        self.signal = self.decay * self.signal + (1 - self.decay) * delta**2
        return delta

    def intensity(self) -> float:
        span = self.intensity_max - self.intensity_min
        return self.intensity_min + span / (1 + math.sqrt(self.signal + EPSILON))


@dataclass
class IslandBandit:
    """Every island's :class:`AdaptiveState` plus the decayed-reward UCB statistics."""

    decay: float = 0.9
    exploration: float = 1.41
    min_visits: int = 3
    states: list[AdaptiveState] = field(default_factory=list)
    visits: list[int] = field(default_factory=list)
    decayed_visits: list[float] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    global_best: float = float("-inf")

    def add_island(self, intensity_min: float, intensity_max: float) -> int:
        self.states.append(AdaptiveState(self.decay, intensity_min, intensity_max))
        self.visits.append(0)
        self.decayed_visits.append(0.0)
        self.rewards.append(0.0)
        return len(self.states) - 1

    def record(self, island: int, fitness: float) -> None:
        """A regular evaluation on ``island``."""
        state = self.states[island]
        before = state.best
        state.record(fitness)
        self.visits[island] += 1
        self.decayed_visits[island] = self.decay * self.decayed_visits[island] + 1.0
        gain = 0.0
        if fitness > before:
            gain = _normalised(fitness - before, self.global_best)
            self.global_best = max(self.global_best, fitness)
        self.rewards[island] = self.decay * self.rewards[island] + gain

    def receive(self, island: int, fitness: float) -> None:
        """An external improvement on ``island`` (no visit, no reward)."""
        self.global_best = max(self.global_best, fitness)
        self.states[island].receive(fitness)

    def productivity(self) -> float:
        """Improvements per evaluation over all islands (1.0 before any evaluation)."""
        evaluations = sum(s.evaluations for s in self.states)
        if evaluations == 0:
            return 1.0
        return sum(s.improvements for s in self.states) / evaluations

    def scores(self, iteration: int) -> list[float]:
        """Each island's UCB score at ``iteration`` (``inf`` for an unvisited island)."""
        out = []
        for i in range(len(self.states)):
            v = self.decayed_visits[i]
            average = self.rewards[i] / v if v > 0 else 0.0
            if self.visits[i] <= 0:
                out.append(math.inf)
                continue
            bonus = self.exploration * math.sqrt(math.log(iteration + 1) / self.visits[i])
            out.append(average + bonus)
        return out

    def pick(self, iteration: int, rng: random.Random) -> tuple[int, str]:
        """The next island and why (``min_visits`` or ``ucb``)."""
        under = [i for i, n in enumerate(self.visits) if n < self.min_visits]
        if under:
            return rng.choice(under), "min_visits"
        best, best_score = 0, -math.inf
        for i, score in enumerate(self.scores(iteration)):
            if score > best_score:
                best, best_score = i, score
        return best, "ucb"

    def state_dict(self) -> dict[str, Any]:
        """``dataclasses.asdict(self)``, without its generic deep copy (every iteration) and
        without looking the fields up again."""
        out: dict[str, Any] = {}
        for name in _BANDIT_FIELDS:
            value = getattr(self, name)
            if name == "states":
                value = [{g: getattr(s, g) for g in _STATE_FIELDS} for s in value]
            elif isinstance(value, list):
                value = list(value)
            out[name] = value
        return out

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> IslandBandit:
        data = dict(state)
        data["states"] = [AdaptiveState(**s) for s in data["states"]]
        return cls(**data)


#: The fields' names in declaration order (what ``dataclasses.fields`` lists).
_STATE_FIELDS = tuple(f.name for f in fields(AdaptiveState))
_BANDIT_FIELDS = tuple(f.name for f in fields(IslandBandit))
