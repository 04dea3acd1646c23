"""EvoX test doubles: the offline model in-process, a scored-by-regex evaluator, a run builder.

The chat model answers exactly as the offline server would (same ``answer`` function and
default chain, routed by the call's purpose), minus HTTP.  The evaluator reads ``score = x``
from the code with a regex: nothing the offline model wrote is executed on the host.  Strategy
sandboxes are real (subprocess or Docker, chosen by the test).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.core.config import GeneralConfig
from harness.core.controller import Controller
from harness.core.errors import LLMError
from harness.core.evaluator import BaseEvaluator
from harness.core.records import EvalResult, LLMCall, Prompt, TaskInfo
from harness.core.registry import BuildEnv, build_scaffold, load_config
from harness.core.scaffold import Scaffold
from harness.core.store import RunRecord
from harness.llm.config import FaultRates
from harness.llm.offline.responders import OfflineRequest
from harness.llm.offline.server import answer, default_responders
from harness.store.sqlite import SQLiteStore
from scaffolds.evox.factory import SessionStrategyFactory
from tests.fakes import SimpleMeter

#: A toy task: the score is the number below.  Ten lines long, like a real program (strategies
#: with latent faults from the offline model only misbehave on programs of eight lines or more).
SEED_PROGRAM = "".join(f"# toy program, line {i}\n" for i in range(1, 10)) + "score = 0.50\n"


class OfflineChat:
    """The offline model without HTTP; ``fail(purpose, n)`` makes the n-th call of a purpose
    raise LLMError."""

    def __init__(
        self,
        seed: int = 0,
        fail: Callable[[str, int], bool] | None = None,
        strategies: list[str] | None = None,
    ) -> None:
        self.seed = seed
        self.fail = fail or (lambda purpose, n: False)
        #: Fixed answers to strategy prompts, used in turn (the offline responder otherwise).
        self.strategies = list(strategies or [])
        self.calls: list[tuple[str, list[dict[str, str]]]] = []
        self.responders = default_responders()

    async def generate(self, prompt: Prompt, *, purpose: str, seed: int) -> LLMCall:
        return await self.complete(prompt.messages(), seed=seed, purpose=purpose)

    async def complete(self, messages: list[dict[str, str]], *, seed: int, purpose: str) -> LLMCall:
        self.calls.append((purpose, messages))
        count = sum(1 for p, _ in self.calls if p == purpose)
        if self.fail(purpose, count):
            raise LLMError(f"injected {purpose} LLM failure (call {len(self.calls)})")
        if purpose == "strategy" and self.strategies:
            code = self.strategies.pop(0)
            return LLMCall(model="fixed", text=f"```python\n{code}\n```", purpose=purpose)
        request = OfflineRequest(
            "offline", tuple((m["role"], m["content"]) for m in messages), seed, purpose
        )
        text = answer(request, seed=self.seed, faults=FaultRates(), responders=self.responders)
        return LLMCall(
            model="offline", text=text, prompt_tokens=10, completion_tokens=10, purpose=purpose
        )

    def state_dict(self) -> dict[str, Any]:
        return {"calls": len(self.calls)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        return None


class RegexEvaluator(BaseEvaluator):
    """``combined_score`` = the last ``score = x`` in the code (capped at 2)."""

    async def evaluate(self, code: str, *, program_id: str, iteration: int) -> EvalResult:
        found = re.findall(r"score = ([-0-9.e]+)", code)
        try:
            value = min(2.0, float(found[-1])) if found else 0.0
        except ValueError:
            value = 0.0
        return EvalResult(status="ok", metrics={"combined_score": value, "validity": 1.0})


def evox_run(
    tmp_path: Path,
    factory: SessionStrategyFactory,
    *,
    iterations: int = 20,
    overrides: list[str] | None = None,
    chat: OfflineChat | None = None,
    run_id: str = "evox-test",
    store: SQLiteStore | None = None,
    create: bool = True,
) -> tuple[Controller, Scaffold, SQLiteStore, OfflineChat]:
    """A controller driving a real EvoX scaffold (strategies in ``factory``'s sandboxes)."""
    spec, config = load_config(
        "evox",
        overrides=[
            f"general.max_iterations={iterations}",
            "memory.validation.stress_programs=200",
            *(overrides or []),
        ],
    )
    env = BuildEnv(
        seed=config.seed,
        evaluator=RegexEvaluator(),
        task=TaskInfo(name="toy", description="toy task"),
        sessions=factory.sessions,
    )
    scaffold = build_scaffold(spec, config, env)
    store = store or SQLiteStore(tmp_path / "store.sqlite")
    run = RunRecord(
        id=run_id,
        scaffold="evox",
        task="toy",
        task_path="",
        config={},
        seed=config.seed,
        max_iterations=iterations,
    )
    if create:
        store.create_run(run)
    chat = chat or OfflineChat(seed=config.seed)
    meter = SimpleMeter()
    general: Any = config.general
    controller = Controller(
        scaffold,
        store=store,
        run=run,
        model=chat,
        meter=meter,
        general=GeneralConfig(**general.model_dump()),
        seed_code=SEED_PROGRAM,
    )
    return controller, scaffold, store, chat
