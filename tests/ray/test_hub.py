"""``galapagos serve --ray-address``: the hub's queue runs on the cluster's nodes and shows each
node's load."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from harness.service import create_app
from harness.store.sqlite import SQLiteStore
from tests.service.conftest import launch, settings, wait_status

pytestmark = [pytest.mark.ray, pytest.mark.docker, pytest.mark.slow]


def test_the_hub_queues_runs_onto_the_cluster_and_shows_each_nodes_load(
    ray_cluster: Any, hub_store: Path, tmp_path: Path, auth: dict[str, str]
) -> None:
    store = SQLiteStore(hub_store)
    hub = settings(tmp_path, allow_local_sandbox=False, workers=2, ray_address="auto")
    with TestClient(create_app(store, hub)) as c:
        ids = [launch(c, auth, iterations=3, overrides=[], seed=seed) for seed in (1, 2)]
        busy: list[dict[str, Any]] = []
        end = time.monotonic() + 120
        while time.monotonic() < end and not busy:
            load = c.get("/api/v1/cluster").json()
            busy = [row for row in load["nodes"] if row.get("runs")]
            time.sleep(0.2)
        assert busy, load  # a node showed a run executing on it
        assert set(busy[0]["runs"]) <= set(ids)
        for run_id in ids:
            run = wait_status(c, run_id, ("completed", "failed"), timeout=300)
            assert run["status"] == "completed", run["error"]
        load = c.get("/api/v1/cluster").json()
        assert load["ray_address"] == "auto"
        nodes = [row for row in load["nodes"] if row["alive"]]
        assert len(nodes) >= 2
        assert all(
            {"capacity", "jobs", "jobs_running", "containers_created"} <= set(row) for row in nodes
        )
        page = c.get("/cluster")
        assert page.status_code == 200 and 'href="/cluster"' in page.text
        assert all(row["node"] in page.text for row in nodes)  # one table row per node
        agents = {row["pid"] for row in nodes}
        # The runs executed in the node agents, not in the hub's process.
        owners = {int(store.get_run(run_id).owner.split(":")[1]) for run_id in ids}
        assert owners <= agents
    store.close()
