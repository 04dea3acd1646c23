"""An engine that stays down past its deadline stops the run as interrupted, even when it ends
several parallel iterations at the same moment (one shared wait, one verdict for all)."""

from __future__ import annotations

import asyncio
import gc
import random
from pathlib import Path
from typing import Any

from harness.components.memory import NullMemory
from harness.components.population import InMemoryPopulation
from harness.components.prompt import DefaultPromptBuilder
from harness.components.selection import TopKConfig, TopKPolicy
from harness.core.config import GeneralConfig
from harness.core.controller import Controller
from harness.core.errors import EngineUnavailable
from harness.core.records import EvalResult
from harness.core.scaffold import Scaffold
from harness.core.store import RunRecord
from harness.store.sqlite import SQLiteStore
from tests.fakes import EchoModel, ScoreEvaluator, ScoreProposer, SimpleMeter

PARALLEL = 3


class OutageEvaluator(ScoreEvaluator):
    """Scores the seed and the first iterations; then every evaluation meets the same outage
    and, once ``PARALLEL`` of them wait for it, all get the deadline's verdict together (as
    the backend's shared engine wait hands it out)."""

    def __init__(self, healthy: int) -> None:
        super().__init__()
        self.healthy = healthy
        self.waiting = 0
        self.verdict = asyncio.Event()

    async def evaluate(self, code: str, *, program_id: str, iteration: int) -> EvalResult:
        if iteration <= self.healthy:
            return await super().evaluate(code, program_id=program_id, iteration=iteration)
        self.waiting += 1
        if self.waiting >= PARALLEL:
            self.verdict.set()
        await self.verdict.wait()
        raise EngineUnavailable(
            "the Docker engine stayed unreachable for 3 s (no answer); start it (bash "
            "scripts/docker-engine.sh) and continue the run with galapagos resume"
        )


def test_simultaneous_engine_verdicts_stop_the_run_once_as_interrupted(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.sqlite")
    run = RunRecord(
        id="r1", scaffold="t", task="t", task_path="", config={}, seed=0, max_iterations=12
    )
    store.create_run(run)
    meter = SimpleMeter()
    scaffold = Scaffold(
        name="t",
        population=InMemoryPopulation(),
        selection=TopKPolicy(random.Random(0), TopKConfig(num_inspirations=2)),
        prompt_builder=DefaultPromptBuilder(),
        proposer=ScoreProposer(),
        evaluator=OutageEvaluator(healthy=3),
        memory=NullMemory(),
    )
    controller = Controller(
        scaffold,
        store=store,
        run=run,
        model=EchoModel(meter=meter),
        meter=meter,
        general=GeneralConfig(max_iterations=12, max_parallel_iterations=PARALLEL),
        seed_code="score = 0.5\n",
    )
    unhandled: list[dict[str, Any]] = []
    loop = asyncio.new_event_loop()
    loop.set_exception_handler(lambda _loop, context: unhandled.append(context))
    try:
        summary = loop.run_until_complete(controller.run_to_end())
        gc.collect()  # finished tasks whose exception nobody retrieved complain when collected
    finally:
        loop.close()
    assert summary.status == "interrupted"
    error = store.get_run("r1").error
    assert "stayed unreachable" in error and "galapagos resume r1" in error
    assert store.done_iterations("r1") == set(range(4))
    assert [c.get("message") for c in unhandled] == []
