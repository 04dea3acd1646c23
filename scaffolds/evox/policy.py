"""``evolved_strategy_sampler``: the selection is whatever the deployed strategy chose.

The strategy is asked in this block's ``start_iteration`` hook (asynchronous: it lives in a
container, with a deadline and the fallback chain of the ``strategy_history`` memory around
it), after the memory has fed it the members it had not seen; ``select`` only hands that answer
to the loop, once per iteration.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from harness.core.block import Step
from harness.core.errors import HarnessError
from harness.core.population import BasePopulation
from harness.core.records import Selection
from harness.core.selection import BaseSelectionPolicy

if TYPE_CHECKING:
    from scaffolds.evox.memory import EvoxMemory

__all__ = ["EvolvedStrategySampler"]


class EvolvedStrategySampler(BaseSelectionPolicy):
    parallel_ok = False

    def __init__(
        self, rng: random.Random, *, memory: EvoxMemory, population: BasePopulation, k: int
    ) -> None:
        super().__init__(rng)
        self.memory = memory
        self.population = population
        self.k = k
        self._prepared: Selection | None = None

    async def start_iteration(self, step: Step) -> None:
        if step.iteration == 0:
            return
        if len(self.population) == 0:
            self._prepared = Selection(parent=None, info={"reason": "empty population"})
            return
        self._prepared = await self.memory.chain.select(
            self.population, self.k, step.iteration, step.event
        )
        self.memory.drop_broken_pending(step)

    def select(self, population: BasePopulation, iteration: int) -> Selection:
        selection, self._prepared = self._prepared, None
        if selection is None:
            raise HarnessError(
                f"EvoX: no strategy answer for iteration {iteration}; the sampler's "
                "start_iteration hook must run before select"
            )
        return selection
