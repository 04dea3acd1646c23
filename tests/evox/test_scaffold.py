"""The EvoX scaffold in the real loop: switches, scoring order, fallback, LLM errors, resume.

Strategies run as local subprocesses here (the offline model's templates and test fixtures
only); the same flows run in Docker in ``test_docker_runtime.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.core.errors import ConfigError
from harness.core.records import Event
from harness.core.scaffold import Scaffold
from harness.core.store import RunRecord
from harness.runs import plan_resume, plan_run
from harness.store.sqlite import SQLiteStore
from scaffolds.evox.factory import LocalStrategyFactory
from tests.evox.fakes import OfflineChat, evox_run
from tests.evox.strategies import GOOD, RAISES_IN_SAMPLE_LATER

RUN = "evox-test"


def strategy_events(store: SQLiteStore) -> list[Event]:
    return [e for e in store.events(RUN) if e.kind.startswith("strategy")]


async def run(ctl: Any, scaffold: Scaffold) -> Any:
    try:
        return await ctl.run_to_end()
    finally:
        await scaffold.aclose()


def assert_nothing_lost(scaffold: Scaffold, store: SQLiteStore) -> None:
    """Every program of the run is in the population and known to the active strategy."""
    stored = {p.id for p in store.programs(RUN)}
    members = {p.id for p in scaffold.population.programs()}
    assert stored == members
    assert members <= scaffold.selection.chain.active.known


async def test_the_strategy_answers_every_attempt_when_the_loop_resamples(
    tmp_path: Path, local_factory: LocalStrategyFactory
) -> None:
    """``select`` awaits the deployed strategy itself, so with ``resample_each_attempt`` a
    retried attempt gets a fresh answer from it (it used to be one stashed answer per
    iteration, and a second ``select`` crashed the run)."""
    chat = OfflineChat(seed=0, fail=lambda purpose, n: purpose == "propose" and n % 2 == 1)
    overrides = [
        "loop.resample_each_attempt=true",
        "loop.retry_llm_errors=true",
        "general.inner_retry_times=2",
        "memory.switch_interval=50",
    ]
    ctl, scaffold, store, _ = evox_run(
        tmp_path, local_factory, iterations=4, chat=chat, overrides=overrides
    )
    summary = await run(ctl, scaffold)
    assert summary.status == "completed"
    selects = store.events(RUN, ["select"])
    assert [(e.iteration, e.payload["attempt"]) for e in selects] == [
        (i, a) for i in range(1, 5) for a in (0, 1)
    ]
    assert all(e.payload["info"]["strategy"] == "seed" for e in selects)
    # The seed strategy was asked eight times: its RNG moved on between an iteration's answers.
    assert len({tuple(e.payload["inspirations"]) for e in selects}) > 1
    assert_nothing_lost(scaffold, store)


@pytest.mark.slow
async def test_stagnation_triggers_switches_and_the_seed_is_scored_first(
    tmp_path: Path, local_factory: LocalStrategyFactory
) -> None:
    ctl, scaffold, store, _ = evox_run(
        tmp_path, local_factory, iterations=24, overrides=["memory.switch_interval=3"]
    )
    summary = await run(ctl, scaffold)
    assert summary.status == "completed"
    kinds = [e.kind for e in strategy_events(store)]
    first = kinds.index("strategy_trigger")
    assert kinds[first + 1] == "strategy_scored"
    scored = [e.payload["strategy"] for e in store.events(RUN, ["strategy_scored"])]
    assert scored[0] == "seed"
    switches = store.events(RUN, ["strategy_switch"])
    assert switches and switches[0].payload["fallback"] == "seed"
    history = scaffold.memory.history
    assert [r.id for r in history.records] == scored
    assert all(r.metrics["search_horizon"] == 3 for r in history.records)
    # The strategy deployed last is scored when the run ends.
    last = store.events(RUN, ["strategy_scored"])[-1]
    assert scaffold.memory.state.pending is None
    assert (last.iteration, last.payload["strategy"]) == (24, switches[-1].payload["active"])
    assert_nothing_lost(scaffold, store)


async def test_a_strategy_raising_in_sample_later_falls_back_and_the_run_goes_on(
    tmp_path: Path, local_factory: LocalStrategyFactory
) -> None:
    chat = OfflineChat(strategies=[RAISES_IN_SAMPLE_LATER.replace("{fuse}", "2"), GOOD])
    ctl, scaffold, store, _ = evox_run(
        tmp_path, local_factory, iterations=16, chat=chat, overrides=["memory.switch_interval=3"]
    )
    summary = await run(ctl, scaffold)
    assert summary.status == "completed" and summary.iterations_done == 16
    events = strategy_events(store)
    kinds = [e.kind for e in events]
    at = kinds.index("strategy_failure")
    failure, restore, retry = events[at], events[at + 1], events[at + 2]
    assert failure.payload["strategy"] == "s1" and failure.payload["op"] == "sample"
    assert "latent bug in sample()" in failure.payload["error"]
    assert restore.kind == "strategy_restore" and restore.payload["restored"] == "seed"
    assert retry.kind == "strategy_retry" and retry.iteration == failure.iteration
    # The same iteration then selected with the restored strategy and went on.
    select = [e for e in store.events(RUN, ["select"]) if e.iteration == failure.iteration]
    assert select and select[0].payload["info"]["strategy"] == "seed"
    scored = {e.payload["strategy"] for e in store.events(RUN, ["strategy_scored"])}
    assert "s1" not in scored  # the broken strategy is never scored
    assert all(r.id != "s1" for r in scaffold.memory.history.records)
    assert_nothing_lost(scaffold, store)


async def test_llm_errors_never_revert_a_healthy_strategy(
    tmp_path: Path, local_factory: LocalStrategyFactory
) -> None:
    # Every third solution call after the 8th, and every second strategy call, fail.
    chat = OfflineChat(
        fail=lambda purpose, n: (
            (purpose == "propose" and n > 8 and n % 3 == 0)
            or (purpose == "strategy" and n % 2 == 0)
        )
    )
    ctl, scaffold, store, _ = evox_run(
        tmp_path, local_factory, iterations=24, chat=chat, overrides=["memory.switch_interval=3"]
    )
    await run(ctl, scaffold)
    llm_failures = [
        e for e in store.events(RUN, ["attempt"]) if e.payload.get("outcome") == "llm_error"
    ]
    meta_failures = [
        e
        for e in store.events(RUN, ["strategy_generation_failed"])
        if e.payload["reason"] == "llm_error"
    ]
    assert llm_failures and meta_failures
    kinds = {e.kind for e in strategy_events(store)}
    assert not kinds & {"strategy_failure", "strategy_restore", "strategy_retry"}
    assert store.events(RUN, ["strategy_switch"])  # the healthy path still switched


@pytest.mark.slow
async def test_a_resumed_run_ends_identical_to_an_uninterrupted_one(
    tmp_path: Path, local_factory: LocalStrategyFactory
) -> None:
    overrides = ["memory.switch_interval=3"]
    ctl, scaffold, store, _ = evox_run(
        tmp_path / "a", local_factory, iterations=18, overrides=overrides
    )
    await run(ctl, scaffold)
    whole = [(p.id, p.parent_id, p.inspiration_ids, p.code) for p in store.programs(RUN)]

    (tmp_path / "b").mkdir()
    ctl, scaffold, store_b, _ = evox_run(
        tmp_path / "b", local_factory, iterations=18, overrides=overrides
    )
    ctl.on_progress = lambda progress: (
        ctl.request_stop() if progress.iterations_done >= 11 else None
    )
    summary = await run(ctl, scaffold)
    assert summary.status == "interrupted"
    assert store_b.events(RUN, ["strategy_switch"])  # interrupted after a switch
    ctl, scaffold, _, _ = evox_run(
        tmp_path / "b",
        local_factory,
        iterations=18,
        overrides=overrides,
        store=store_b,
        create=False,
    )
    ctl.restore()
    await run(ctl, scaffold)
    resumed = [(p.id, p.parent_id, p.inspiration_ids, p.code) for p in store_b.programs(RUN)]
    assert resumed == whole
    revived = store_b.events(RUN, ["strategy_revived"])
    assert len(revived) == 1 and revived[0].payload["active"].startswith("s")


def test_fault_injection_is_no_setting_and_old_runs_that_stored_it_still_resume(
    tmp_path: Path,
) -> None:
    with pytest.raises(ConfigError, match="offline_faults"):
        plan_run(
            scaffold="evox",
            task="circle_packing",
            iterations=2,
            sandbox="local",
            overrides=["memory.offline_faults={hang: 0.5}"],
        )
    plan = plan_run(scaffold="evox", task="circle_packing", iterations=2, sandbox="local")
    config = plan.config.model_dump(mode="json")
    config["memory"]["offline_faults"] = {}  # as runs stored it while it was a setting
    store = SQLiteStore(tmp_path / "s.sqlite")
    record = RunRecord(
        id="old",
        scaffold="evox",
        task="circle_packing",
        task_path="",
        config=config,
        seed=0,
        max_iterations=2,
        status="interrupted",
    )
    store.create_run(record)
    assert plan_resume(store, "old").config.memory == plan.config.memory
