"""The EvoX loop with strategies in real Docker containers: fallback and resume."""

from __future__ import annotations

from pathlib import Path

import pytest

from scaffolds.evox.factory import StrategyFactory
from tests.evox.fakes import OfflineChat, evox_run
from tests.evox.strategies import GOOD, RAISES_IN_SAMPLE_LATER
from tests.evox.test_docker_hostile import my_strategy_containers

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("no_leaked_containers")]
RUN = "evox-test"


async def test_a_valid_strategy_that_raises_in_sample_at_iteration_k_falls_back(
    tmp_path: Path, docker_factory: StrategyFactory
) -> None:
    chat = OfflineChat(strategies=[GOOD, RAISES_IN_SAMPLE_LATER.replace("{fuse}", "2"), GOOD])
    ctl, scaffold, store, _ = evox_run(
        tmp_path, docker_factory, iterations=16, chat=chat, overrides=["memory.switch_interval=3"]
    )
    try:
        summary = await ctl.run_to_end()
    finally:
        await scaffold.aclose()
    assert summary.status == "completed" and summary.iterations_done == 16
    validated = store.events(RUN, ["strategy_validation"])
    assert [e.payload["passed"] for e in validated][:2] == [True, True]
    switched_at = store.events(RUN, ["strategy_switch"])[1].iteration
    failure = store.events(RUN, ["strategy_failure"])[0]
    k = failure.iteration
    assert k > switched_at + 1  # it served a few iterations first
    kinds = [e.kind for e in store.events(RUN) if e.iteration == k]
    at = kinds.index("strategy_failure")
    assert kinds[at : at + 3] == ["strategy_failure", "strategy_restore", "strategy_retry"]
    restore = store.events(RUN, ["strategy_restore"])[0].payload
    assert (restore["broken"], restore["restored"]) == ("s2", "s1")  # the previous strategy
    select = [e for e in store.events(RUN, ["select"]) if e.iteration == k]
    assert select[0].payload["info"]["strategy"] == "s1"
    assert {p.id for p in store.programs(RUN)} <= scaffold.selection.chain.active.known
    assert my_strategy_containers() == []


async def test_resume_recreates_the_strategy_containers_and_continues_identically(
    tmp_path: Path, docker_factory: StrategyFactory
) -> None:
    overrides = ["memory.switch_interval=3"]
    ctl, scaffold, store, _ = evox_run(
        tmp_path / "a", docker_factory, iterations=14, overrides=overrides
    )
    try:
        await ctl.run_to_end()
    finally:
        await scaffold.aclose()
    whole = [(p.id, p.parent_id, p.inspiration_ids) for p in store.programs(RUN)]

    (tmp_path / "b").mkdir()
    ctl, scaffold, store_b, _ = evox_run(
        tmp_path / "b", docker_factory, iterations=14, overrides=overrides
    )
    ctl.on_progress = lambda p: ctl.request_stop() if p.iterations_done >= 9 else None
    try:
        await ctl.run_to_end()
    finally:
        await scaffold.aclose()  # the process "dies": its containers go away
    assert my_strategy_containers() == []
    ctl, scaffold, _, _ = evox_run(
        tmp_path / "b",
        docker_factory,
        iterations=14,
        overrides=overrides,
        store=store_b,
        create=False,
    )
    ctl.restore()
    try:
        await ctl.run_to_end()
    finally:
        await scaffold.aclose()
    assert [(p.id, p.parent_id, p.inspiration_ids) for p in store_b.programs(RUN)] == whole
    assert store_b.events(RUN, ["strategy_revived"])
