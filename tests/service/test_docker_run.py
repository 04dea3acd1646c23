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
