"""A scaffold: the six components plus the hooks that give a method its extra control flow.

The controller drives one loop for every scaffold (select → prompt → propose → evaluate →
admit → observe).  Methods that need more (AdaEvolve's UCB and paradigms, EvoX's strategy
switch) subclass :class:`Scaffold` and override the async hooks, which run in the controller's
task between iterations and may record events and call the LLM through ``ctx``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from harness.core.evaluator import BaseEvaluator
from harness.core.memory import BaseMemory
from harness.core.population import BasePopulation
from harness.core.prompt import BasePromptBuilder
from harness.core.proposer import LLM, BaseProposer
from harness.core.records import IterationOutcome, Program
from harness.core.selection import BaseSelectionPolicy

__all__ = ["HookContext", "Scaffold"]


class HookContext(Protocol):
    """What a scaffold hook may do: read the run, record events, call the LLM."""

    llm: LLM
    max_iterations: int

    def event(self, kind: str, **payload: Any) -> None: ...

    def programs(self) -> Mapping[str, Program]:
        """Every program of the run (admitted or evicted), by id."""
        ...


@dataclass
class Scaffold:
    name: str
    population: BasePopulation
    selection: BaseSelectionPolicy
    prompt_builder: BasePromptBuilder
    proposer: BaseProposer
    evaluator: BaseEvaluator
    memory: BaseMemory
    #: Whether iterations may overlap (``general.max_parallel_iterations`` > 1).
    parallel_ok: bool = True
    #: Re-run ``select`` before every attempt instead of once per iteration (AdaEvolve).
    resample_each_attempt: bool = False

    async def start_iteration(self, iteration: int, ctx: HookContext) -> None:
        """Runs before ``select`` of ``iteration``."""

    async def end_iteration(
        self, iteration: int, outcome: IterationOutcome, ctx: HookContext
    ) -> None:
        """Runs after the outcome was admitted and observed (also when every attempt failed)."""

    async def aclose(self) -> None:
        """Release what the scaffold started (e.g. EvoX strategy containers); always called."""

    def admit(self, program: Program, outcome_iteration: int) -> bool:
        """Offer an evaluated child to the population (a scaffold may route it to an island)."""
        return self.population.add(program)

    def state_dict(self) -> dict[str, Any]:
        return {
            "population": self.population.state_dict(),
            "selection": self.selection.state_dict(),
            "memory": self.memory.state_dict(),
            "extra": self.extra_state(),
        }

    def load_state_dict(self, state: Mapping[str, Any], programs: Mapping[str, Program]) -> None:
        self.population.load_state_dict(state["population"], programs)
        self.selection.load_state_dict(state["selection"])
        self.memory.load_state_dict(state["memory"])
        self.load_extra_state(state.get("extra") or {})

    def extra_state(self) -> dict[str, Any]:
        """Scaffold-level state beyond the components (override with ``load_extra_state``)."""
        return {}

    def load_extra_state(self, state: Mapping[str, Any]) -> None:
        """Restore what ``extra_state`` returned."""
