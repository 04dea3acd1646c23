"""Per-iteration plumbing for the controller: the buffer one iteration writes into, the seeded
and accounted LLM handle given to proposers and hooks, and the :class:`~harness.core.block.Step`
block hooks receive.

Nothing here touches the store: the controller commits an iteration's buffer in one
transaction when the iteration ends.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol

from harness.core.errors import BudgetExhausted, HarnessError, LLMError
from harness.core.llm import LLM, ChatModel
from harness.core.records import Event, LLMCall, Program, Prompt
from harness.core.store import EvaluationRow, LLMCallRow

__all__ = [
    "COPY_FIELDS",
    "IterationBuffer",
    "IterationStep",
    "LLMHandle",
    "Meter",
    "copy_program",
    "program_id",
]

#: Fields ``Step.new_program`` may change on a copy (never code, metrics or score).
COPY_FIELDS = frozenset(
    {"metadata", "parent_id", "generation", "parent_label", "inspiration_ids", "changes"}
)


def program_id(iteration: int) -> str:
    """The id of the child admitted in ``iteration`` (at most one per iteration)."""
    return f"p{iteration}"


def copy_program(source: Program, new_id: str, iteration: int, **changes: Any) -> Program:
    """``source`` under ``new_id``, made in ``iteration``: same code, metrics and score; only
    :data:`COPY_FIELDS` may change. ``parent_id`` defaults to the source, ``metadata`` is merged
    over the source's, and ``metadata["copy_of"]`` names the original (a copy of a copy too)."""
    bad = set(changes) - COPY_FIELDS
    if bad:
        raise HarnessError(
            f"new_program cannot set {', '.join(sorted(bad))}: a copy keeps the source's "
            f"code, metrics and score; it may change {', '.join(sorted(COPY_FIELDS))}"
        )
    metadata = {
        **source.metadata,
        **dict(changes.pop("metadata", None) or {}),
        "copy_of": source.metadata.get("copy_of", source.id),
    }
    return dataclasses.replace(
        source,
        id=new_id,
        iteration=iteration,
        parent_id=changes.pop("parent_id", source.id),
        metadata=metadata,
        **changes,
    )


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
    #: Programs blocks created in this iteration (numbers their ids).
    copies: int = 0
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


class IterationStep:
    """The :class:`~harness.core.block.Step` of one iteration."""

    def __init__(
        self,
        buffer: IterationBuffer,
        llm: LLM,
        *,
        max_iterations: int,
        programs: Mapping[str, Program],
        register: Callable[[Program, IterationBuffer], None],
    ) -> None:
        self._buffer = buffer
        self._llm = llm
        self._max_iterations = max_iterations
        self._programs = MappingProxyType(programs) if isinstance(programs, dict) else programs
        self._register = register

    @property
    def iteration(self) -> int:
        return self._buffer.iteration

    @property
    def max_iterations(self) -> int:
        return self._max_iterations

    @property
    def llm(self) -> LLM:
        return self._llm

    def event(self, kind: str, **payload: Any) -> None:
        self._buffer.event(kind, **payload)

    def programs(self) -> Mapping[str, Program]:
        return self._programs

    def new_program(self, source: Program, **changes: Any) -> Program:
        n = self._buffer.copies + 1
        copy = copy_program(source, f"{program_id(self.iteration)}.{n}", self.iteration, **changes)
        self._buffer.copies = n
        self._register(copy, self._buffer)
        return copy
