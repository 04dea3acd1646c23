"""Runs on one shared ``Runtime``: one backend and pool, canaries once, one endpoint, a cap."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from harness.runs import execute, plan_run
from harness.runtime import Runtime
from harness.store.sqlite import SQLiteStore

pytestmark = [pytest.mark.docker, pytest.mark.slow]


async def test_concurrent_runs_share_one_backend_and_match_runs_alone(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.sqlite")
    plans = [
        plan_run(scaffold=scaffold, task="circle_packing", iterations=2, seed=1)
        for scaffold in ("topk", "best_of_n")
    ]
    runtime = Runtime(max_containers=2, parallel=2)
    try:
        shared = await asyncio.gather(*(execute(p, store, runtime=runtime) for p in plans))
        assert [s.status for s in shared] == ["completed", "completed"]
        assert runtime.canary_runs == 1
        assert len(runtime.backends) == 1 and runtime.endpoints == 1
        assert 1 <= runtime.peak_jobs <= 2
        backend = runtime.backends[0]
        # Both runs ended: their warm containers are gone although the backend stays open.
        assert backend.pool is not None and backend.pool.idle() == 0  # type: ignore[attr-defined]
        assert runtime.containers_created >= 2 * 3  # at least every evaluation's container
    finally:
        await runtime.aclose()
    with pytest.raises(RuntimeError, match="closed"):
        await runtime.backend(plans[0].config.evaluator, None)

    # Sharing changes nothing a run computes.
    for plan, summary in zip(plans, shared, strict=True):
        alone = await execute(plan, store)
        assert alone.best_score == summary.best_score
        assert [p.code for p in store.programs(alone.run_id)] == [
            p.code for p in store.programs(summary.run_id)
        ]
