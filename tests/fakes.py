"""Test doubles for the LLM and evaluator seams and for the :class:`~harness.core.block.Step`
hooks receive (never for Docker or the openai client)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Mapping
from typing import Any

from harness.core._iteration import copy_program
from harness.core.errors import BudgetExhausted
from harness.core.evaluator import BaseEvaluator
from harness.core.population import BasePopulation, ReadOnlyPopulation
from harness.core.proposer import LLM, BaseProposer
from harness.core.records import EvalResult, LLMCall, Program, Prompt, Proposal, Selection
from harness.core.selection import BaseSelectionPolicy


class SimpleMeter:
    def __init__(self, max_tokens: int | None = None) -> None:
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.cost = 0.0
        self.max_tokens = max_tokens

    def check(self) -> None:
        if (
            self.max_tokens is not None
            and self.prompt_tokens + self.completion_tokens >= self.max_tokens
        ):
            raise BudgetExhausted(f"token budget {self.max_tokens} spent")

    def record(self, call: LLMCall) -> None:
        self.prompt_tokens += call.prompt_tokens
        self.completion_tokens += call.completion_tokens
        self.cost += call.cost

    def state_dict(self) -> dict[str, Any]:
        return {"p": self.prompt_tokens, "c": self.completion_tokens, "cost": self.cost}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.prompt_tokens, self.completion_tokens, self.cost = (
            state["p"],
            state["c"],
            state["cost"],
        )


class EchoModel:
    """Answers every prompt with a fixed text; counts calls; meters them like the real client."""

    def __init__(self, text: str = "ok", meter: SimpleMeter | None = None) -> None:
        self.text = text
        self.meter = meter or SimpleMeter()
        self.calls: list[list[dict[str, str]]] = []

    async def generate(self, prompt: Prompt, *, purpose: str, seed: int) -> LLMCall:
        self.meter.check()
        self.calls.append(prompt.messages())
        call = LLMCall(model="echo", text=self.text, prompt_tokens=10, completion_tokens=5)
        self.meter.record(call)
        return call

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        pass


class ScoreProposer(BaseProposer):
    """Child code is ``score = <parent score + step>``; records which parent each call served."""

    def __init__(self, step: float = 0.01) -> None:
        self.step = step
        self.parents: list[str | None] = []

    async def propose(self, prompt: Prompt, parent: Program | None, llm: LLM) -> Proposal:
        await llm.generate(prompt)
        self.parents.append(parent.id if parent else None)
        base = parent.score if parent else 0.0
        return Proposal(code=f"score = {base + self.step!r}\n", changes="bump")


class ScoreEvaluator(BaseEvaluator):
    """Reads ``score = x`` from the code; iterations in ``fail`` return a failing result."""

    def __init__(self, fail: Callable[[int], bool] = lambda it: False) -> None:
        self.fail = fail
        self.calls = 0

    async def evaluate(self, code: str, *, program_id: str, iteration: int) -> EvalResult:
        self.calls += 1
        if self.fail(iteration):
            return EvalResult(
                status="invalid",
                metrics={"combined_score": 0.0, "validity": 0.0},
                artifacts={"error": "injected failure"},
            )
        match = re.search(r"score = ([-0-9.e]+)", code)
        value = float(match.group(1)) if match else 0.0
        return EvalResult(status="ok", metrics={"combined_score": value, "validity": 1.0})


class RecordingStep:
    """A :class:`~harness.core.block.Step` for driving blocks without the controller: it records
    events and makes copies with the controller's :func:`~harness.core._iteration.copy_program`
    (same checks, same ``copy_of``), named ``p<iteration>.<n>`` as the controller names them
    unless a subclass overrides :meth:`copy_id`. It has no stored programs, and an LLM only
    when given one."""

    def __init__(self, iteration: int, max_iterations: int = 1000, llm: Any = None) -> None:
        self.iteration = iteration
        self._llm = llm
        self.max_iterations = max_iterations
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.copies = 0

    @property
    def llm(self) -> LLM:
        if self._llm is None:
            raise AssertionError("this block hook was not expected to call the LLM")
        return self._llm

    def event(self, kind: str, **payload: Any) -> None:
        self.events.append((kind, payload))

    def programs(self) -> Mapping[str, Program]:
        return {}

    def copy_id(self, source: Program, metadata: Mapping[str, Any]) -> str:
        return f"p{self.iteration}.{self.copies}"

    def new_program(self, source: Program, **changes: Any) -> Program:
        self.copies += 1
        new_id = self.copy_id(source, changes.get("metadata") or {})
        return copy_program(source, new_id, self.iteration, **changes)


def select_now(
    policy: BaseSelectionPolicy, population: BasePopulation, iteration: int
) -> Selection:
    """``policy``'s selection for ``iteration`` as the controller asks for it (a read-only
    view of the population, a step of that iteration), outside any event loop."""
    view = ReadOnlyPopulation(population)
    return asyncio.run(policy.select(view, RecordingStep(iteration)))
