"""PromptBuilder: renders the messages for one LLM call.

Contract:

- ``build(selection, context)`` is pure: the same selection and context give the same prompt
  (no clock, no RNG unless the builder was given one).  It must not mutate its inputs.
- The current (parent) program goes last, in the last fenced code block of the user message,
  so diff-based proposers (and the offline model) can find the text the edits apply to.
- Failed attempts of the current iteration (``context.attempts``) are shown so the model can
  fix them; memory text (``context.memory``) is inserted as given.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.core.records import Attempt, Program, Prompt, Selection

__all__ = ["BasePromptBuilder", "PromptContext"]


@dataclass(frozen=True)
class PromptContext:
    """What a prompt builder may use besides the selection."""

    iteration: int
    task_description: str = ""
    language: str = "python"
    attempts: Sequence[Attempt] = ()
    memory: str = ""
    #: Population-level numbers (size, best score, …) a builder may print.
    stats: Mapping[str, Any] = field(default_factory=dict)
    #: Evaluation wall limit, for the timeout warning.
    eval_timeout_s: float | None = None
    #: Recent strong programs ("previous attempts"), best first.
    history: Sequence[Program] = ()


class BasePromptBuilder(ABC):
    @abstractmethod
    def build(self, selection: Selection, context: PromptContext) -> Prompt:
        """Render the prompt for one attempt."""
