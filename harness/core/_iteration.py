"""Per-iteration plumbing for the controller: the buffer one iteration writes into, the seeded
and accounted LLM handle given to proposers and hooks, and the hook context.

Nothing here touches the store: the controller commits an iteration's buffer in one
transaction when the iteration ends.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from harness.core.errors import BudgetExhausted, LLMError
from harness.core.records import Event, LLMCall, Program, Prompt
from harness.store.base import EvaluationRow, LLMCallRow

if TYPE_CHECKING:
    from harness.core.controller import Controller

__all__ = ["ChatModel", "IterationBuffer", "LLMHandle", "Meter", "HookCtx"]


class ChatModel(Protocol):
    """An OpenAI-compatible chat model (or ensemble) that returns accounted calls."""

    async def complete(self, messages: list[dict[str, str]], *, seed: int, purpose: str) -> LLMCall:
        """One completion; raises ``LLMError`` once its retries are exhausted."""
        ...


class Meter(Protocol):
    """Token/cost accounting with budget caps."""

    prompt_tokens: int
    completion_tokens: int
    cost: float

    def check(self) -> None:
        """Raise ``BudgetExhausted`` if a cap is reached."""

    def record(self, call: LLMCall) -> None: ...

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state: Mapping[str, Any]) -> None: ...


@dataclass
class IterationBuffer:
    iteration: int
    events: list[Event] = field(default_factory=list)
    programs: list[Program] = field(default_factory=list)
    evaluations: list[EvaluationRow] = field(default_factory=list)
    llm_calls: list[LLMCallRow] = field(default_factory=list)
    attempt: int = 0
    #: Set when the budget ran out during this iteration: it is committed, then the run stops.
    budget_spent: BudgetExhausted | None = None

    def event(self, kind: str, **payload: Any) -> None:
        self.events.append(Event(self.iteration, kind, payload))


class LLMHandle:
    """The ``LLM`` given to proposers and hooks: a seed per call drawn from the run's RNG, and
    every call (failed ones too) recorded in the iteration's buffer."""

    def __init__(
        self,
        model: ChatModel,
        rng: random.Random,
        buffer: IterationBuffer,
        *,
        log_prompts: bool = True,
    ) -> None:
        self._model = model
        self._rng = rng
        self._buffer = buffer
        self._log_prompts = log_prompts

    async def generate(self, prompt: Prompt, *, purpose: str = "propose") -> LLMCall:
        seed = self._rng.getrandbits(31)
        try:
            call = await self._model.generate(prompt, purpose=purpose, seed=seed)
        except LLMError as exc:
            failed = LLMCall(model="?", text="", ok=False, error=str(exc), purpose=purpose)
            self._record(prompt, failed)
            raise
        self._record(prompt, call)
        return call

    def _record(self, prompt: Prompt, call: LLMCall) -> None:
        text = (prompt.system + "\n\n" + prompt.user) if self._log_prompts else ""
        self._buffer.llm_calls.append(
            LLMCallRow(self._buffer.iteration, self._buffer.attempt, call, prompt=text)
        )


class HookCtx:
    """What scaffold hooks see (see :class:`harness.core.scaffold.HookContext`)."""

    def __init__(self, controller: Controller, buffer: IterationBuffer, llm: LLMHandle) -> None:
        self._controller = controller
        self._buffer = buffer
        self.llm = llm
        self.max_iterations = controller.max_iterations

    def event(self, kind: str, **payload: Any) -> None:
        self._buffer.event(kind, **payload)

    def programs(self) -> Mapping[str, Program]:
        return self._controller.all_programs

    def add_program(self, program: Program) -> None:
        """Record a program a hook created (e.g. a migrant copy) so it is stored."""
        self._controller.all_programs[program.id] = program
        self._buffer.programs.append(program)
