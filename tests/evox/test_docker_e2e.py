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
    assert stored <= scaffold.selection.chain.active.known
    assert summary.best_score is not None and summary.best_score >= summary.seed_score
    assert my_strategy_containers() == []


async def test_a_60_iteration_run_conditions_switches_on_the_guide_models_insight(
    tmp_path: Path,
) -> None:
    """The offline run of docs/evox.md: every rewrite prompt carries the guide model's problem
    summary and population insight, and labelled solution prompts carry its operator texts."""
    summary, store, scaffold = await run_evox(
        tmp_path / "store.sqlite",
        task="circle_packing",
        iterations=60,
        seed=0,
        faults="{}",
        run_id="guided",
    )
    log = "\n".join(switch_log(store, "guided"))
    assert summary.status == "completed" and summary.iterations_done == 60, log
    switches = store.events("guided", ["strategy_switch"])
    assert switches, log
    (operators,) = store.events("guided", ["variation_operators"])
    assert operators.payload["source"] == "generated"
    calls = store.llm_exchanges("guided")
    switched_at = {e.iteration for e in switches}
    rewrites = [c for c in calls if c["purpose"] == "strategy" and c["iteration"] in switched_at]
    assert rewrites and all(
        "## Population insight (guide model" in c["prompt"]
        and "## Problem summary (guide model)" in c["prompt"]
        for c in rewrites
    )
    labels = scaffold.selection.chain.labels
    labelled = [p for p in store.programs("guided") if p.parent_label]
    prompts = {c["iteration"]: c["prompt"] for c in calls if c["purpose"] == "propose"}
    assert all(p.parent_label in (labels.diverge, labels.refine) for p in labelled)
    assert all(p.parent_label in prompts[p.iteration] for p in labelled)
    print(f"switches {len(switches)}, labelled children {len(labelled)}")
    assert my_strategy_containers() == []
