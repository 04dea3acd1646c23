"""The hub's run queue survives the engine (real dockerd, stopped and started by the test): a run
the engine stopped past its wait deadline ends ``interrupted`` with nothing charged, and the hub
continues it by itself once the engine answers again."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from harness.service import create_app
from harness.service._db import ServiceDB
from harness.store.sqlite import SQLiteStore
from tests.chaos.engine import engine_down, engine_up, restored_engine
from tests.service.conftest import launch, settings, wait_status

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_the_hub_continues_a_run_the_engine_stopped(tmp_path: Path) -> None:
    hub_store = tmp_path / "hub.sqlite"
    SQLiteStore(hub_store).close()
    auth = {"Authorization": f"Bearer {ServiceDB(hub_store).create_token('tester')}"}
    store = SQLiteStore(hub_store)
    app = create_app(store, settings(tmp_path, allow_local_sandbox=False))
    with restored_engine(), TestClient(app) as c:
        run_id = launch(c, auth, iterations=30, overrides=["evaluator.engine_wait_s=2"])
        deadline = time.monotonic() + 300
        while c.get(f"/api/v1/runs/{run_id}").json()["iterations_done"] < 2:
            assert time.monotonic() < deadline, "the run made no progress"
            time.sleep(0.05)
        engine_down()
        try:
            stopped = wait_status(c, run_id, ("interrupted", "failed", "completed"), 120)
            assert stopped["status"] == "interrupted", stopped
            time.sleep(1.5)  # the hub notes that it waits for the engine
            waiting = c.get(f"/api/v1/runs/{run_id}").json()
            assert "continues this run when it is back" in waiting["error"], waiting
        finally:
            engine_up()
        run = wait_status(c, run_id, ("completed", "failed"), 600)
        calm_id = launch(c, auth, iterations=30, overrides=["evaluator.engine_wait_s=2"])
        calm = wait_status(c, calm_id, ("completed", "failed"), 600)
    assert run["status"] == "completed", run
    assert calm["status"] == "completed", calm
    # Every iteration's result equals the undisturbed run's: nothing was charged to a candidate.
    assert outcome(store, run_id) == outcome(store, calm_id)
    assert run["iterations_done"] == 30
    store.close()


def outcome(store: SQLiteStore, run_id: str) -> list[object]:
    programs = [(p.id, p.parent_id, p.code, p.score) for p in store.programs(run_id)]
    return [*programs, [(e["iteration"], e["status"]) for e in store.evaluations(run_id)]]
