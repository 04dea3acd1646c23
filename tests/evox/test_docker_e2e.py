"""EvoX end to end on circle_packing: real evaluator, real strategies, the offline model over HTTP.

A shorter cousin of ``python -m tests.evox.e2e --iterations 60`` (whose figures are in
docs/evox.md).  Pinned to seed 0 and the fault mix below, which produce at least one switch and
at least one runtime fallback; the assertions are about what the run must show, not numbers.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.evox.e2e import run_evox, switch_log
from tests.evox.test_docker_hostile import my_strategy_containers

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.usefixtures("no_leaked_containers")]


async def test_an_evox_run_switches_falls_back_and_completes(tmp_path: Path) -> None:
    summary, store, scaffold = await run_evox(
        tmp_path / "store.sqlite",
        task="circle_packing",
        iterations=30,
        seed=0,
        faults="{crash_sample: 0.4, alloc: 0.2, fabricate: 0.2}",
        run_id="e2e",
        overrides=["memory.switch_interval=5"],
    )
    log = "\n".join(switch_log(store, "e2e"))
    assert summary.status == "completed" and summary.iterations_done == 30, log
    assert store.events("e2e", ["strategy_switch"]), log
    failures = store.events("e2e", ["strategy_failure"])
    restores = store.events("e2e", ["strategy_restore"])
    assert failures and len(restores) == len(failures), log
    retried = {e.iteration for e in store.events("e2e", ["strategy_retry"])}
    assert {e.iteration for e in failures if e.payload["op"] == "sample"} <= retried
    stored = {p.id for p in store.programs("e2e")}
    assert stored == {p.id for p in scaffold.population.programs()}
    assert stored <= scaffold.memory.state.chain.active.known
    assert summary.best_score is not None and summary.best_score >= summary.seed_score
    assert my_strategy_containers() == []
