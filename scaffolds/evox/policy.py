"""``EvolvedStrategySampler``: the selection is whatever the deployed strategy chose.

The strategy is asked in the scaffold's ``start_iteration`` hook (asynchronous: it lives in a
container, with a deadline and the fallback chain around it); ``select`` only hands that answer
to the loop, once per iteration.
"""

from __future__ import annotations

from harness.core.errors import HarnessError
from harness.core.population import BasePopulation
from harness.core.records import Selection
from harness.core.selection import BaseSelectionPolicy

__all__ = ["EvolvedStrategySampler"]


class EvolvedStrategySampler(BaseSelectionPolicy):
    _prepared: Selection | None = None

    def prepare(self, selection: Selection) -> None:
        self._prepared = selection

    def select(self, population: BasePopulation, iteration: int) -> Selection:
        selection, self._prepared = self._prepared, None
        if selection is None:
            raise HarnessError(
                f"EvoX: no strategy answer for iteration {iteration}; the scaffold's "
                "start_iteration hook must run before select"
            )
        return selection
