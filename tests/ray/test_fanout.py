"""Evaluations fanned out over the nodes of a local Ray cluster, sandboxed on every node."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import docker
import pytest

from harness.distributed.cluster import Cluster
from harness.runs import RunPlan, execute, plan_run
from harness.runtime import Runtime
from harness.sandbox.ownership import RUN_LABEL
from harness.store.sqlite import SQLiteStore

pytestmark = [pytest.mark.ray, pytest.mark.docker, pytest.mark.slow]

ITERATIONS = 4


def lineage(store: SQLiteStore, run_id: str) -> list[tuple[Any, ...]]:
    return [
        (p.id, p.parent_id, p.code, p.score, dict(p.metrics), p.inspiration_ids)
        for p in store.programs(run_id)
    ]


async def run_containers_settled(run_id: str, settle_s: float = 45.0) -> list[str]:
    """:func:`run_containers`, polled without blocking the event loop (the cluster's reaps of a
    lost node's containers are tasks on it)."""
    end = time.monotonic() + settle_s
    while True:
        left = await asyncio.to_thread(run_containers, run_id, 0.0)
        if not left or time.monotonic() > end:
            return left
        await asyncio.sleep(0.5)


def run_containers(run_id: str, settle_s: float = 20.0) -> list[str]:
    """Containers of ``run_id`` still on the engine after up to ``settle_s``."""
    client = docker.from_env()
    try:
        end = time.monotonic() + settle_s
        while True:
            left = client.containers.list(
                all=True, ignore_removed=True, filters={"label": f"{RUN_LABEL}={run_id}"}
            )
            if not left or time.monotonic() > end:
                return [c.name for c in left]
            time.sleep(0.25)
    finally:
        client.close()


@pytest.fixture(scope="module")
def plan() -> RunPlan:
    return plan_run(scaffold="topk", task="circle_packing", iterations=ITERATIONS, seed=3)


@pytest.fixture(scope="module")
def local_run(plan: RunPlan, tmp_path_factory: pytest.TempPathFactory) -> tuple[SQLiteStore, str]:
    """The same seed run on this machine alone (a Runtime of one)."""
    store = SQLiteStore(tmp_path_factory.mktemp("local") / "s.sqlite")
    summary = asyncio.run(execute(plan, store))
    assert summary.status == "completed"
    return store, summary.run_id


async def test_a_run_fanned_out_over_two_nodes_equals_the_same_run_local(
    ray_cluster: Any, plan: RunPlan, local_run: tuple[SQLiteStore, str], tmp_path: Path
) -> None:
    cluster = Cluster()
    assert len(cluster.nodes) == 2
    store = SQLiteStore(tmp_path / "s.sqlite")
    async with Runtime(cluster=cluster) as runtime:
        summary = await execute(plan, store, runtime=runtime)
        (backend,) = runtime.backends
        placed = dict(backend.placed)  # type: ignore[attr-defined]
        load = await cluster.load()
    assert summary.status == "completed" and summary.iterations_done == ITERATIONS
    assert len(placed) == 2 and all(n >= 2 for n in placed.values()), placed
    # Each node: its own canaries once, its own containers, the task files fetched once.
    assert [row["canary_runs"] for row in load] == [1, 1]
    assert all(row["containers_created"] > 0 for row in load)
    assert all(row["files_fetched"] == 1 for row in load), load
    assert runtime.canary_runs == 0  # the driver started no container of its own
    local_store, local_id = local_run
    assert lineage(store, summary.run_id) == lineage(local_store, local_id)
    assert store.evaluation_count(summary.run_id) == local_store.evaluation_count(local_id)
    assert run_containers(summary.run_id) == []  # every node dropped the run's containers


async def test_a_node_killed_mid_run_loses_and_charges_nothing(
    ray_cluster: Any, plan: RunPlan, local_run: tuple[SQLiteStore, str], tmp_path: Path
) -> None:
    from tests.ray.conftest import WORKER

    doomed = ray_cluster.add_node(**WORKER)
    ray_cluster.wait_for_nodes()
    cluster = Cluster()
    assert len(cluster.nodes) == 3
    victim = next(n for n in cluster.nodes if n.address and n.node_id == doomed.node_id)
    store = SQLiteStore(tmp_path / "s.sqlite")
    killed = threading.Event()

    async def kill_when_busy() -> None:
        while victim.inflight == 0:  # a job of this run is on the victim right now
            await asyncio.sleep(0.005)
        await asyncio.to_thread(ray_cluster.remove_node, doomed)
        killed.set()

    async with Runtime(cluster=cluster) as runtime:
        killer = asyncio.create_task(kill_when_busy())
        summary = await execute(plan, store, runtime=runtime)
        # The removal runs in a thread and can outlast the run's last iterations (they go on
        # on the survivors): wait for it rather than cancel it.  A victim that never took a
        # job fails here, with the timeout.
        await asyncio.wait_for(killer, timeout=120)
    assert killed.is_set()
    assert summary.status == "completed" and summary.iterations_done == ITERATIONS
    assert cluster.lost_nodes and cluster.lost_nodes[0][1].startswith("Ray node")
    survived = [e for e in store.evaluations(summary.run_id) if e["result"].get("infra_retries")]
    assert (
        len(survived) == 1
        and "was lost during the job" in survived[0]["result"]["infra_retries"][0]
    )
    # Nothing charged (every iteration as in the local run) and nothing counted twice.
    local_store, local_id = local_run
    assert lineage(store, summary.run_id) == lineage(local_store, local_id)
    assert store.evaluation_count(summary.run_id) == local_store.evaluation_count(local_id)
    assert not store.events(summary.run_id, ["iteration_failed"])
    assert await run_containers_settled(summary.run_id) == []  # reaped by a survivor


def test_galapagos_run_with_ray_address_fans_out_and_equals_the_local_run(
    ray_cluster: Any, local_run: tuple[SQLiteStore, str], tmp_path: Path
) -> None:
    import json

    from typer.testing import CliRunner

    from harness.cli import app

    jobs_before = sum(row.get("jobs", 0) for row in asyncio.run(Cluster().load()))
    store = tmp_path / "cli.sqlite"
    args = ["run", "-s", "topk", "-t", "circle_packing", "-i", str(ITERATIONS), "--seed", "3"]
    args += ["--json", "--store", str(store), "--ray-address", "auto"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "Ray cluster auto: 2 Galapagos node(s)" in result.stderr
    run_id = json.loads(result.stdout)["run_id"]
    jobs_after = sum(row.get("jobs", 0) for row in asyncio.run(Cluster().load()))
    evaluations = SQLiteStore(store).evaluation_count(run_id)
    assert jobs_after - jobs_before >= evaluations > ITERATIONS  # every evaluation on a node
    local_store, local_id = local_run
    assert lineage(SQLiteStore(store), run_id) == lineage(local_store, local_id)
