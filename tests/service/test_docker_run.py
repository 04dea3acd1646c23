"""A run launched through the hub's API evaluates in the Docker sandbox (the hub's default)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from harness.service import create_app
from harness.store.sqlite import SQLiteStore
from tests.service.conftest import launch, settings, wait_status

pytestmark = pytest.mark.docker


def test_a_hub_run_evaluates_in_docker(
    hub_store: Path, tmp_path: Path, auth: dict[str, str]
) -> None:
    store = SQLiteStore(hub_store)
    with TestClient(create_app(store, settings(tmp_path, allow_local_sandbox=False))) as c:
        run_id = launch(c, auth, iterations=2, overrides=[])
        run = wait_status(c, run_id, ("completed", "failed"), timeout=300)
        assert run["status"] == "completed", run["error"]
        config = c.get(f"/runs/{run_id}").text
        assert "&#34;sandbox&#34;: &#34;docker&#34;" in config  # the stored config, escaped
        evaluation = c.get(f"/api/v1/runs/{run_id}/programs/p0").json()["evaluations"][0]
        assert evaluation["status"] == "ok"
    store.close()


def test_hub_workers_share_one_runtime(
    hub_store: Path, tmp_path: Path, auth: dict[str, str]
) -> None:
    """Two workers, two runs at once: one sandbox backend, the canaries once, one endpoint."""
    store = SQLiteStore(hub_store)
    app = create_app(store, settings(tmp_path, allow_local_sandbox=False, workers=2))
    with TestClient(app) as c:
        ids = [launch(c, auth, iterations=2, overrides=[], seed=seed) for seed in (1, 2)]
        for run_id in ids:
            run = wait_status(c, run_id, ("completed", "failed"), timeout=300)
            assert run["status"] == "completed", run["error"]
        runtime = app.state.hub.queue.runtime
        assert runtime is not None and runtime.canary_runs == 1
        assert len(runtime.backends) == 1 and runtime.endpoints == 1
        assert runtime.containers_created >= 1  # one backend served both (boxes reuse them)
    store.close()
