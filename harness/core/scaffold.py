"""A scaffold: six built blocks, what may be shown of the task, and the loop's control flow.

A scaffold is a composition (see :mod:`harness.core.blocks`); it holds no method logic of its
own.  What a method adds to select → prompt → propose → evaluate → admit lives in its blocks'
hooks (see :mod:`harness.core.block`) and in :class:`~harness.core.config.LoopConfig`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.core.block import Block
from harness.core.config import LoopConfig
from harness.core.evaluator import BaseEvaluator
from harness.core.memory import BaseMemory
from harness.core.population import BasePopulation
from harness.core.prompt import BasePromptBuilder
from harness.core.proposer import BaseProposer
from harness.core.records import Program, TaskInfo
from harness.core.selection import BaseSelectionPolicy

__all__ = ["HOOK_ORDER", "Scaffold"]

#: The order block hooks run in (see :mod:`harness.core.block`).
HOOK_ORDER = ("population", "memory", "selection_policy", "prompt", "proposer")


@dataclass
class Scaffold:
    name: str
    population: BasePopulation
    selection: BaseSelectionPolicy
    prompt_builder: BasePromptBuilder
    proposer: BaseProposer
    evaluator: BaseEvaluator
    memory: BaseMemory
    task: TaskInfo = field(default_factory=TaskInfo)
    loop: LoopConfig = field(default_factory=LoopConfig)
    #: The composition's block name per slot (for events and ``show``).
    block_names: Mapping[str, str] = field(default_factory=dict)

    def blocks(self) -> list[tuple[str, Block]]:
        """The blocks with hooks, in :data:`HOOK_ORDER`."""
        by_slot: dict[str, Block] = {
            "population": self.population,
            "memory": self.memory,
            "selection_policy": self.selection,
            "prompt": self.prompt_builder,
            "proposer": self.proposer,
        }
        return [(slot, by_slot[slot]) for slot in HOOK_ORDER]

    @property
    def parallel_ok(self) -> bool:
        """Whether iterations may overlap: every block must allow it."""
        return all(block.parallel_ok for _, block in self.blocks())

    @property
    def resample_each_attempt(self) -> bool:
        return self.loop.resample_each_attempt

    def state_dict(self) -> dict[str, Any]:
        state: dict[str, Any] = {
            "population": self.population.state_dict(),
            "selection": self.selection.state_dict(),
            "memory": self.memory.state_dict(),
        }
        for key, block in (("prompt", self.prompt_builder), ("proposer", self.proposer)):
            block_state = block.state_dict()
            if block_state:
                state[key] = block_state
        return state

    def load_state_dict(self, state: Mapping[str, Any], programs: Mapping[str, Program]) -> None:
        self.population.load_state_dict(state["population"], programs)
        self.selection.load_state_dict(state["selection"])
        self.memory.load_state_dict(state["memory"])
        self.prompt_builder.load_state_dict(state.get("prompt") or {})
        self.proposer.load_state_dict(state.get("proposer") or {})

    async def aclose(self) -> None:
        """Close every block (the evaluator belongs to whoever created it); always called."""
        for _, block in self.blocks():
            await block.aclose()
