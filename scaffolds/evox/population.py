"""``evolved_strategy_store``: the host's canonical copy of every program (EvoX).

A keep-all population that is never capped: the deployed strategy holds its own copy of every
program it was given and has no remove operation, so an evicted program would come back from
it.  The strategy blocks ask for this type, so a capped population cannot stand in for it.
"""

from __future__ import annotations

from harness.components.population import InMemoryPopulation
from harness.core.blocks import block
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
