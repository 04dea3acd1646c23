"""The loop's contract: seed at 0, attempts with feedback, events, one commit per iteration."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest

from harness.components.memory import NullMemory
from harness.components.population import InMemoryPopulation
from harness.components.prompt import DefaultPromptBuilder
from harness.components.selection import TopKConfig, TopKPolicy
from harness.core.config import GeneralConfig
from harness.core.controller import Controller
from harness.core.scaffold import Scaffold
from harness.core.store import RunRecord
from harness.store.sqlite import SQLiteStore
from tests.fakes import EchoModel, ScoreEvaluator, ScoreProposer, SimpleMeter


def make(tmp_path: Path, *, evaluator=None, retries=1, iterations=5, meter=None, parallel=1):
    scaffold = Scaffold(
        name="t",
        population=InMemoryPopulation(),
        selection=TopKPolicy(random.Random(0), TopKConfig(num_inspirations=2)),
        prompt_builder=DefaultPromptBuilder(),
        proposer=ScoreProposer(),
        evaluator=evaluator or ScoreEvaluator(),
        memory=NullMemory(),
    )
    store = SQLiteStore(tmp_path / "s.sqlite")
    run = RunRecord(
        id="r1",
        scaffold="t",
        task="t",
        task_path="",
        config={},
        seed=0,
        max_iterations=iterations,
    )
    store.create_run(run)
    meter = meter or SimpleMeter()
    model = EchoModel(meter=meter)
    ctl = Controller(
        scaffold,
        store=store,
        run=run,
        model=model,
        meter=meter,
        general=GeneralConfig(
            max_iterations=iterations, inner_retry_times=retries, max_parallel_iterations=parallel
        ),
        seed_code="score = 0.5\n",
    )
    return ctl, store, model


def test_seed_is_iteration_zero_and_llm_iterations_are_one_to_n(tmp_path: Path) -> None:
    ctl, store, model = make(tmp_path, iterations=4)
    summary = asyncio.run(ctl.run_to_end())
    assert summary.status == "completed"
    assert [p.iteration for p in store.programs("r1")] == [0, 1, 2, 3, 4]
    assert len(model.calls) == 4
    assert summary.seed_score == 0.5
    assert summary.best_score == pytest.approx(0.54)
    run = store.get_run("r1")
    assert run.iterations_done == 4 and run.best_program_id == "p4"


def test_failed_attempts_are_fed_back_into_the_next_prompt(tmp_path: Path) -> None:
    flaky = ScoreEvaluator(fail=lambda it: False)
    calls = {"n": 0}

    async def fail_first(code: str, *, program_id: str, iteration: int):
        calls["n"] += 1
        if calls["n"] == 2:  # the first LLM attempt (after the seed evaluation) fails
            return await ScoreEvaluator(fail=lambda it: True).evaluate(
                code, program_id=program_id, iteration=iteration
            )
        return await flaky.evaluate(code, program_id=program_id, iteration=iteration)

    flaky_eval = ScoreEvaluator()
    flaky_eval.evaluate = fail_first  # type: ignore[method-assign]
    ctl, store, model = make(tmp_path, evaluator=flaky_eval, retries=3, iterations=1)
    asyncio.run(ctl.run_to_end())
    assert len(model.calls) == 2
    second_prompt = model.calls[1][-1]["content"]
    assert "Failed Attempts In This Iteration" in second_prompt
    assert "injected failure" in second_prompt
    outcomes = [e.payload["outcome"] for e in store.events("r1", ["attempt"])]
    assert outcomes == ["evaluation_failed", "ok"]


def test_every_decision_is_an_event(tmp_path: Path) -> None:
    ctl, store, _ = make(tmp_path, iterations=2)
    asyncio.run(ctl.run_to_end())
    kinds = [e.kind for e in store.events("r1")]
    assert kinds == ["seed", "admit", "select", "attempt", "admit", "select", "attempt", "admit"]
    select = store.events("r1", ["select"])[0].payload
    assert select["parent"] == "p0" and select["inspirations"] == ["p0"]


def test_budget_stops_the_run_cleanly(tmp_path: Path) -> None:
    ctl, store, model = make(tmp_path, iterations=10, meter=SimpleMeter(max_tokens=30))
    summary = asyncio.run(ctl.run_to_end())
    assert summary.status == "budget_exhausted"
    assert len(model.calls) == 2  # 15 tokens per call: the third call would exceed 30
    assert store.get_run("r1").status == "budget_exhausted"


def test_parallel_iterations_overlap_and_all_complete(tmp_path: Path) -> None:
    in_flight = {"now": 0, "max": 0}
    base = ScoreEvaluator()

    async def slow(code: str, *, program_id: str, iteration: int):
        in_flight["now"] += 1
        in_flight["max"] = max(in_flight["max"], in_flight["now"])
        await asyncio.sleep(0.01)
        in_flight["now"] -= 1
        return await base.evaluate(code, program_id=program_id, iteration=iteration)

    evaluator = ScoreEvaluator()
    evaluator.evaluate = slow  # type: ignore[method-assign]
    ctl, store, _ = make(tmp_path, evaluator=evaluator, iterations=8, parallel=4)
    summary = asyncio.run(ctl.run_to_end())
    assert summary.iterations_done == 8
    assert in_flight["max"] > 1
    assert store.done_iterations("r1") == set(range(9))


def test_restore_continues_from_the_checkpoint(tmp_path: Path) -> None:
    ctl, store, _ = make(tmp_path, iterations=3)
    asyncio.run(ctl.run_to_end())
    # A second controller over the same run, asked for more iterations, continues the lineage.
    ctl2, _, model2 = make(tmp_path / "unused", iterations=5)
    ctl2.store, ctl2.run = store, store.get_run("r1")
    ctl2.restore()
    asyncio.run(ctl2.run_to_end())
    assert len(model2.calls) == 2
    assert [p.id for p in store.programs("r1")] == ["p0", "p1", "p2", "p3", "p4", "p5"]


def test_from_scratch_first_program_is_admitted_even_when_it_fails(tmp_path: Path) -> None:
    # SkyDiscover §2.0.3 step 1: the from-scratch iteration applies no failure check.  Once the
    # population has a member, failing children are rejected again.
    evaluator = ScoreEvaluator(fail=lambda it: it in (1, 2))
    ctl, store, model = make(tmp_path, evaluator=evaluator, iterations=3)
    ctl.seed_code = None
    summary = asyncio.run(ctl.run_to_end())
    programs = {p.id: p for p in store.programs("r1")}
    assert sorted(programs) == ["p1", "p3"]
    assert programs["p1"].parent_id is None and programs["p1"].metrics["validity"] == 0.0
    assert programs["p3"].parent_id == "p1"
    attempts = [e.payload for e in store.events("r1", ["attempt"])]
    assert attempts[0]["outcome"] == "ok" and attempts[0]["from_scratch"] is True
    assert attempts[0]["status"] == "invalid"
    assert attempts[1]["outcome"] == "evaluation_failed"
    assert summary.best_program_id == "p3" and len(model.calls) == 3


def test_budget_spent_mid_iteration_commits_the_calls_already_made(tmp_path: Path) -> None:
    # 15 tokens a call, cap 20: attempt 0 and 1 of iteration 1 are made (30 tokens), attempt 2
    # is refused.  The iteration is committed as failed with both calls, so usage is exact.
    evaluator = ScoreEvaluator(fail=lambda it: it >= 1)
    ctl, store, model = make(
        tmp_path, evaluator=evaluator, retries=3, iterations=3, meter=SimpleMeter(max_tokens=20)
    )
    summary = asyncio.run(ctl.run_to_end())
    assert summary.status == "budget_exhausted" and len(model.calls) == 2
    run = store.get_run("r1")
    assert run.status == "budget_exhausted" and run.tokens == 30
    assert len(store.llm_calls("r1")) == 2
    assert store.done_iterations("r1") == {0, 1}
    outcomes = [e.payload["outcome"] for e in store.events("r1", ["attempt"])]
    assert outcomes == ["evaluation_failed", "evaluation_failed", "budget_exhausted"]
    assert [e.iteration for e in store.events("r1", ["iteration_failed"])] == [1]
    checkpoint = store.checkpoint("r1")
    assert checkpoint is not None and checkpoint[0] == 1
    assert checkpoint[1]["controller"]["meter"] == {"p": 20, "c": 10, "cost": 0.0}


def test_budget_lets_parallel_iterations_in_flight_finish(tmp_path: Path) -> None:
    base = ScoreEvaluator()

    async def slow(code: str, *, program_id: str, iteration: int):
        await asyncio.sleep(0.01 * iteration)
        return await base.evaluate(code, program_id=program_id, iteration=iteration)

    evaluator = ScoreEvaluator()
    evaluator.evaluate = slow  # type: ignore[method-assign]
    ctl, store, model = make(
        tmp_path, evaluator=evaluator, iterations=10, parallel=4, meter=SimpleMeter(max_tokens=20)
    )
    summary = asyncio.run(ctl.run_to_end())
    assert summary.status == "budget_exhausted"
    # Four iterations start at 0 tokens; the first two calls are made (30 tokens), the next two
    # are refused.  All four are committed, none is cancelled: every call made is recorded.
    calls = store.llm_calls("r1")
    assert len(calls) == len(model.calls) == 2
    assert store.get_run("r1").tokens == 30
    assert {c["iteration"] for c in calls} == {1, 2}
    assert store.done_iterations("r1") == {0, 1, 2, 3, 4}


def test_one_iteration_at_a_time_gives_the_event_loop_a_turn_before_each(tmp_path: Path) -> None:
    """Sequential iterations are awaited in place (no task per iteration), yet each still lets
    the loop's other tasks run first, even when nothing in the iteration waits (an instant
    model and evaluator, as here)."""
    turns = {"n": 0}
    seen: list[int] = []
    base = ScoreEvaluator()

    async def counted(code: str, *, program_id: str, iteration: int):
        seen.append(turns["n"])
        return await base.evaluate(code, program_id=program_id, iteration=iteration)

    evaluator = ScoreEvaluator()
    evaluator.evaluate = counted  # type: ignore[method-assign]
    ctl, store, _ = make(tmp_path, evaluator=evaluator, iterations=5)

    async def main() -> None:
        async def spin() -> None:
            while True:
                turns["n"] += 1
                await asyncio.sleep(0)

        spinner = asyncio.create_task(spin())
        try:
            await ctl.run_to_end()
        finally:
            spinner.cancel()

    asyncio.run(main())
    assert len(seen) == 6  # the seed and five iterations
    assert all(b > a for a, b in zip(seen[1:], seen[2:], strict=False))
    assert store.done_iterations("r1") == set(range(6))


def test_one_iteration_at_a_time_stops_and_cancels_as_tasks_did(tmp_path: Path) -> None:
    """A stop asked for during an iteration lets it commit and starts no other; cancelling the
    run during an iteration leaves the iterations before it committed and the run
    interrupted."""
    holder: dict[str, Controller] = {}
    base = ScoreEvaluator()

    async def stop_at_2(code: str, *, program_id: str, iteration: int):
        if iteration == 2:
            holder["ctl"].request_stop()
        return await base.evaluate(code, program_id=program_id, iteration=iteration)

    evaluator = ScoreEvaluator()
    evaluator.evaluate = stop_at_2  # type: ignore[method-assign]
    ctl, store, _ = make(tmp_path / "stop", evaluator=evaluator, iterations=5)
    holder["ctl"] = ctl
    summary = asyncio.run(ctl.run_to_end())
    assert summary.status == "interrupted" and store.done_iterations("r1") == {0, 1, 2}

    async def hang_at_3(code: str, *, program_id: str, iteration: int):
        if iteration == 3:
            await asyncio.Event().wait()
        return await base.evaluate(code, program_id=program_id, iteration=iteration)

    evaluator = ScoreEvaluator()
    evaluator.evaluate = hang_at_3  # type: ignore[method-assign]
    ctl, store, _ = make(tmp_path / "cancel", evaluator=evaluator, iterations=5)

    async def main() -> None:
        task = asyncio.create_task(ctl.run_to_end())
        while store.done_iterations("r1") != {0, 1, 2}:
            await asyncio.sleep(0.001)
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert store.done_iterations("r1") == {0, 1, 2}
    assert store.get_run("r1").status == "interrupted"
