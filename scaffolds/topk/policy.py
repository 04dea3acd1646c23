"""``TopKPolicy``: the best program is the parent, the next k are its context.

As SkyDiscover's ``TopKDatabase``: parent = rank 1 and context = ranks 2..k+1 of a stable
descending sort by score (ties keep admission order); with a single program it is both the
parent and the sole context program.  Fully deterministic.
"""

from __future__ import annotations

import random

from pydantic import Field

from harness.core.population import BasePopulation
from harness.core.records import Selection
from harness.core.selection import BaseSelectionPolicy
from harness.core.validation import StrictModel

__all__ = ["TopKConfig", "TopKPolicy"]


class TopKConfig(StrictModel):
    #: k: context programs shown after the parent.
    num_inspirations: int = Field(4, ge=0)


class TopKPolicy(BaseSelectionPolicy):
    def __init__(self, rng: random.Random, config: TopKConfig) -> None:
        super().__init__(rng)
        self.k = config.num_inspirations

    def select(self, population: BasePopulation, iteration: int) -> Selection:
        ranked = population.top(self.k + 1)
        if not ranked:
            return Selection(parent=None, info={"reason": "empty population: from scratch"})
        parent = ranked[0]
        context = ranked[1:] if len(ranked) > 1 else ranked[:1]
        return Selection(parent=parent, inspirations=tuple(context), info={"reason": "top-1"})
