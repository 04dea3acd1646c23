"""PromptBuilder: renders the messages for one LLM call.

Contract:

- ``build(selection, context)`` is pure: the same selection and context give the same prompt
  (no clock, no RNG unless the builder was given one).  It must not mutate its inputs.
- The current (parent) program goes last, in the last fenced code block of the user message,
  so diff-based proposers (and the offline model) can find the text the edits apply to.
- Failed attempts of the current iteration (``context.attempts``) are shown so the model can
  fix them; memory text (``context.memory``) is inserted as given.
- What else of the population to show (previous attempts, top or diverse programs) is the
  builder's rule: it reads ``context.population``, a read-only view.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.core.block import Block
from harness.core.population import PopulationView
from harness.core.records import Attempt, Program, Prompt, Selection, TaskInfo

__all__ = ["BasePromptBuilder", "PromptContext"]


class _NoPopulation:
    def programs(self) -> Sequence[Program]:
        return ()

    def newest_first(self) -> Iterator[Program]:
        return iter(())

    def get(self, program_id: str) -> Program | None:
        return None

    def top(self, n: int) -> list[Program]:
        return []

    def best(self) -> Program | None:
        return None

    def __len__(self) -> int:
        return 0

    def __contains__(self, program_id: object) -> bool:
        return False


@dataclass(frozen=True)
class PromptContext:
    """What a prompt builder may use besides the selection."""

    iteration: int
    task: TaskInfo = field(default_factory=TaskInfo)
    attempts: Sequence[Attempt] = ()
    memory: str = ""
    #: The population, read-only.
    population: PopulationView = field(default_factory=_NoPopulation)
    #: The run's best program so far (the controller's ranking), if any.
    best: Program | None = None
    #: Extra numbers a builder may print.
    stats: Mapping[str, Any] = field(default_factory=dict)

    @property
    def task_description(self) -> str:
        return self.task.description

    @property
    def language(self) -> str:
        return self.task.language

    @property
    def eval_timeout_s(self) -> float | None:
        return self.task.eval_timeout_s


class BasePromptBuilder(Block, ABC):
    @abstractmethod
    def build(self, selection: Selection, context: PromptContext) -> Prompt:
        """Render the prompt for one attempt."""

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:  # noqa: B027 - optional
        """Restore what ``state_dict`` returned (stateless builders need nothing)."""
