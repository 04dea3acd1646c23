"""The reusable selection policies: greedy top-k and best-of-N (SkyDiscover ports).

- ``top_k`` (:class:`TopKPolicy`, SkyDiscover's ``TopKDatabase``): parent = rank 1 and context
  = ranks 2..k+1 of a stable descending sort by score (ties keep admission order); with a single
  program it is both the parent and the sole context program.  Fully deterministic.
- ``best_of_n_reuse`` (:class:`BestOfNPolicy`, SkyDiscover's ``BestOfNDatabase``): the reuse
  counter advances in ``observe`` and only when a child was admitted (a failed iteration is a
  free retry on the same parent); a new parent is the program with the highest
  ``combined_score`` (missing or non-numeric counts as -inf, a bool as 0 or 1, ties go to the
  earliest), not ``get_score``.  Inspirations are a fresh random sample of up to k programs from
  the top max(2k, 10), excluding the parent.
- ``best_of_n_attempts`` (:class:`BestOfNAttemptsPolicy`): best-of-N whose budget is charged at
  every selection, failed attempts included.
"""

from __future__ import annotations

import numbers
import random
from collections.abc import Mapping
from typing import Any

from pydantic import Field

from harness.core.block import Step
from harness.core.blocks import block
from harness.core.population import PopulationView
from harness.core.records import IterationOutcome, Program, Selection
from harness.core.selection import BaseSelectionPolicy
from harness.core.validation import StrictModel

__all__ = [
    "BestOfNAttemptsPolicy",
    "BestOfNConfig",
    "BestOfNPolicy",
    "TopKConfig",
    "TopKPolicy",
    "combined_score_key",
    "global_best",
]


class TopKConfig(StrictModel):
    #: k: context programs shown after the parent.
    num_inspirations: int = Field(4, ge=0)


@block("top_k", "The best program is the parent; the next k by score are its context.")
class TopKPolicy(BaseSelectionPolicy):
    def __init__(self, rng: random.Random, config: TopKConfig) -> None:
        super().__init__(rng)
        self.k = config.num_inspirations

    async def select(self, population: PopulationView, step: Step) -> Selection:
        ranked = population.top(self.k + 1)
        if not ranked:
            return Selection(parent=None, info={"reason": "empty population: from scratch"})
        parent = ranked[0]
        context = ranked[1:] if len(ranked) > 1 else ranked[:1]
        return Selection(parent=parent, inspirations=tuple(context), info={"reason": "top-1"})


class BestOfNConfig(StrictModel):
    #: N: children drawn from one parent before switching to the global best.
    best_of_n: int = Field(5, ge=1)
    #: Context programs sampled from the top pool each step.
    num_inspirations: int = Field(4, ge=0)


def combined_score_key(program: Program) -> float:
    """The reference's ``safe_score``: a numeric ``combined_score`` (a bool counts, as
    ``isinstance(True, (int, float))`` does), else -inf."""
    value = program.metrics.get("combined_score")
    if isinstance(value, numbers.Real):
        return float(value)
    return float("-inf")


def global_best(population: PopulationView) -> Program:
    """The first program with the highest numeric ``combined_score`` (all missing: the first).

    A program's ``score`` *is* its ``combined_score`` when that is a number, so the population's
    ranking (score desc, admission order) finds it without scanning every member.
    """
    n = 16
    while True:
        ranked = population.top(n)
        for p in ranked:
            key = combined_score_key(p)
            if key != float("-inf") and key == p.score:
                return p
        if len(ranked) < n:
            return population.programs()[0]
        n *= 16


@block(
    "best_of_n_reuse",
    "Reuse one parent until N admitted children, then commit to the global best; context "
    "re-sampled from the top pool each step.",
)
class BestOfNPolicy(BaseSelectionPolicy):
    #: Charge one use per ``select`` (attempt-counted) instead of per admitted child.
    charge_at_selection = False

    def __init__(self, rng: random.Random, config: BestOfNConfig) -> None:
        super().__init__(rng)
        self.n = config.best_of_n
        self.k = config.num_inspirations
        self.current_parent_id: str | None = None
        self.uses = 0

    async def select(self, population: PopulationView, step: Step) -> Selection:
        if len(population) == 0:
            return Selection(parent=None, info={"reason": "empty population: from scratch"})
        current = population.get(self.current_parent_id) if self.current_parent_id else None
        if current is None or self.uses >= self.n:
            parent = global_best(population)
            reason = "commit to global best"
            self.current_parent_id = parent.id
            self.uses = 0
        else:
            parent, reason = current, f"reuse ({self.uses}/{self.n} used)"
        inspirations = self._context(population, parent)
        if self.charge_at_selection:
            self.uses += 1
        return Selection(
            parent=parent,
            inspirations=tuple(inspirations),
            info={"reason": reason, "uses": self.uses},
        )

    def _context(self, population: PopulationView, parent: Program) -> list[Program]:
        pool = [p for p in population.top(max(2 * self.k, 10)) if p.id != parent.id]
        if not pool:
            pool = [p for p in population.programs() if p.id != parent.id]
        return self.rng.sample(pool, min(self.k, len(pool)))

    def observe(self, outcome: IterationOutcome) -> None:
        if not self.charge_at_selection and outcome.admitted and self.current_parent_id is not None:
            self.uses += 1

    def state_dict(self) -> dict[str, Any]:
        return super().state_dict() | {
            "current_parent_id": self.current_parent_id,
            "uses": self.uses,
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        super().load_state_dict(state)
        self.current_parent_id = state["current_parent_id"]
        self.uses = int(state["uses"])


@block(
    "best_of_n_attempts",
    "Best-of-N whose per-parent budget is spent at every selection, failed attempts included "
    "(fixed parent turnover).",
)
class BestOfNAttemptsPolicy(BestOfNPolicy):
    """Spends one of the parent's N uses on every ``select``, valid child or not."""

    charge_at_selection = True
