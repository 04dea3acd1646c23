"""``evolved_strategy_store``: the host's canonical copy of every program (EvoX).

A keep-all population that is never capped: the deployed strategy holds its own copy of every
program it was given and has no remove operation, so an evicted program would come back from
it.  The strategy blocks ask for this type, so a capped population cannot stand in for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.components.population import InMemoryPopulation
from harness.core.blocks import block
from harness.core.records import Program
from scaffolds.evox.config import EvoxPopulationConfig

__all__ = ["StrategyStore"]


@block(
    "evolved_strategy_store",
    "Keep-all canonical copy of every program (never capped: the deployed strategy holds its "
    "own view, fed by add).",
)
class StrategyStore(InMemoryPopulation):
    def __init__(self, config: EvoxPopulationConfig) -> None:
        super().__init__(capacity=config.capacity)  # None: the config refuses any other
        #: Member ids in admission order (members never leave).
        self._order: list[str] = []

    def add(self, program: Program) -> bool:
        admitted = super().add(program)
        if admitted:
            self._order.append(program.id)
        return admitted

    def admitted(self) -> Sequence[str]:
        """Member ids in admission order; it only ever grows at the end (read-only)."""
        return self._order

    def load_state_dict(self, state: Mapping[str, Any], programs: Mapping[str, Program]) -> None:
        self._order = []
        super().load_state_dict(state, programs)
