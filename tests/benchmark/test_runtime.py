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
        # One backend served both runs' evaluations (containers hold several candidates'
        # boxes, so there may be fewer containers than evaluations).
        assert runtime.containers_created >= 1
        assert sum(store.evaluation_count(s.run_id) for s in shared) >= 2 * 3
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


async def test_strategy_sessions_are_the_runtimes_containers_under_its_cap() -> None:
    """An EvoX strategy server is a session of the Runtime's own backend: the same canaries,
    the same owner and backend labels (so the same reaping), and the same container cap."""
    import docker

    from harness.core.config import EvaluatorConfig
    from harness.core.errors import StrategyError
    from harness.sandbox.docker_backend import DockerBackend
    from harness.sandbox.ownership import BACKEND_LABEL, OWNER_LABEL, ROLE_LABEL, RUN_LABEL
    from harness.sandbox.sessions import DockerSession
    from scaffolds.evox.factory import ContainerLimits, SessionStrategyFactory

    ev = EvaluatorConfig()
    runtime = Runtime(max_containers=1)
    try:
        sessions = await runtime.sessions(ev, "run-s")
        assert runtime.canary_runs == 0 and not runtime.backends  # opened on first use
        client = SessionStrategyFactory(sessions, run_id="run-s").client(ContainerLimits())
        await client.start()
        try:
            (backend,) = runtime.backends
            assert isinstance(backend, DockerBackend) and runtime.canary_runs == 1
            session = client.transport.session  # type: ignore[attr-defined]
            assert isinstance(session, DockerSession)
            labels = session.container.labels
            assert labels[BACKEND_LABEL] == backend.instance
            assert labels[OWNER_LABEL] == backend.owner
            assert (labels[ROLE_LABEL], labels[RUN_LABEL]) == ("strategy", "run-s")
            # A request holds the one slot: an evaluation waits for it, and the other way round.
            slot = runtime._slot
            assert slot is not None
            async with slot:
                call = asyncio.create_task(client.count("main"))
                await asyncio.sleep(0.3)
                assert not call.done()  # waiting for the slot the evaluation holds
            with pytest.raises(StrategyError, match="main"):  # no handle "main": the call ran
                await call
            assert slot.peak == 1
        finally:
            await client.close()
        gone = docker.from_env()
        try:
            with pytest.raises(docker.errors.NotFound):
                gone.containers.get(session.container.id)
        finally:
            gone.close()
    finally:
        await runtime.aclose()
