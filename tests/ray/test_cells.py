"""Benchmark cells on the nodes of a local Ray cluster, every commit in the head's store."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from harness.benchmark import BenchmarkSpec, plan_benchmark, prepare_cells, run_benchmark
from harness.distributed.cluster import Cluster
from harness.runs import execute, plan_run
from harness.runtime import Runtime
from harness.store.owner import owner_token
from harness.store.sqlite import SQLiteStore
from tests.ray.conftest import WORKER
from tests.ray.test_fanout import lineage, run_containers

pytestmark = [pytest.mark.ray, pytest.mark.docker, pytest.mark.slow]

ITERATIONS = 3


async def test_a_four_cell_benchmark_on_two_nodes_commits_everything_to_the_head_store(
    ray_cluster: Any, tmp_path: Path
) -> None:
    store = SQLiteStore(tmp_path / "head.sqlite")
    spec = BenchmarkSpec(
        name="scale",
        scaffolds=("topk", "best_of_n"),
        tasks=("circle_packing",),
        seeds=2,
        iterations=ITERATIONS,
    )
    plan = plan_benchmark(spec, store)
    states = prepare_cells(plan, store)
    cluster = Cluster()
    nodes = {row["pid"] for row in await cluster.load() if row["alive"]}
    assert len(nodes) == 2
    async with Runtime(cluster=cluster, parallel=4) as runtime:
        result = await run_benchmark(plan, store, states, parallel=4, runtime=runtime)
    cluster.close()
    assert [c.status for c in result.cells] == ["completed"] * 4
    owners = set()
    for cell in result.cells:
        assert cell.run_id is not None
        run = store.get_run(cell.run_id)
        owners.add(int(run.owner.split(":")[1]))
        # Every iteration's commit reached this (the head's) store: programs, evaluations,
        # events, checkpoint, and the run's record.
        assert store.done_iterations(run.id) == set(range(ITERATIONS + 1))
        assert store.program_count(run.id) >= ITERATIONS
        assert store.evaluation_count(run.id) >= ITERATIONS + 1
        assert store.checkpoint(run.id) is not None
        assert run.iterations_done == ITERATIONS and run.stop_reason == "completed"
        assert run_containers(run.id) == []
    assert owners == nodes  # both worker nodes ran cells; this process ran none
    assert owner_token().split(":")[1] not in {str(o) for o in owners}
    assert result.canary_runs == 0


async def test_a_killed_workers_cell_resumes_elsewhere_and_equals_an_undisturbed_cell(
    ray_cluster: Any, tmp_path: Path
) -> None:
    undisturbed_store = SQLiteStore(tmp_path / "alone.sqlite")
    alone = await execute(
        plan_run(scaffold="topk", task="circle_packing", iterations=5, seed=5), undisturbed_store
    )
    doomed = ray_cluster.add_node(**WORKER)
    ray_cluster.wait_for_nodes()
    store = SQLiteStore(tmp_path / "head.sqlite")
    spec = BenchmarkSpec(
        name="chaos", scaffolds=("topk",), tasks=("circle_packing",), seeds=1, iterations=5
    )
    # Seed 0 of the matrix is seed 0; rebuild its plan with seed 5 to match ``alone``.
    plan = plan_benchmark(spec, store)
    states = prepare_cells(plan, store)
    states[0].plan = plan_run(scaffold="topk", task="circle_packing", iterations=5, seed=5)
    cluster = Cluster()
    for node in cluster.nodes:  # the cell starts on the doomed node
        if node.node_id != doomed.node_id:
            node.runs += 100

    async def kill_after_two_commits() -> None:
        while True:
            await asyncio.sleep(0.05)
            runs = store.list_runs()
            if runs and runs[0].iterations_done >= 2:
                break
        for node in cluster.nodes:
            if node.node_id != doomed.node_id:
                node.runs -= 100
        await asyncio.to_thread(ray_cluster.remove_node, doomed)

    async with Runtime(cluster=cluster) as runtime:
        killer = asyncio.create_task(kill_after_two_commits())
        result = await run_benchmark(plan, store, states, parallel=1, runtime=runtime)
        await killer
    cluster.close()
    (cell,) = result.cells
    assert cell.status == "completed", cell
    assert cluster.lost_nodes  # the worker really died mid-cell
    run = store.get_run(cell.run_id or "")
    assert run.iterations_done == 5
    assert lineage(store, run.id) == lineage(undisturbed_store, alone.run_id)
    assert store.evaluation_count(run.id) == undisturbed_store.evaluation_count(alone.run_id)
    assert run_containers(run.id) == []


def test_galapagos_bench_with_ray_address_runs_its_cells_on_the_nodes(
    ray_cluster: Any, tmp_path: Path
) -> None:
    import json

    from typer.testing import CliRunner

    from harness.cli import app

    store = tmp_path / "cli.sqlite"
    args = ["bench", "--name", "cli", "--scaffolds", "topk", "--tasks", "circle_packing"]
    args += ["--iterations", "1", "--json", "--store", str(store), "--ray-address", "auto"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["status"] == {"completed": 1}
    (cell,) = summary["cells"]
    run = SQLiteStore(store).get_run(cell["run_id"])
    assert run.owner.split(":")[1] != owner_token().split(":")[1]  # a node agent ran it
    assert "Ray cluster auto: 2 Galapagos node(s)" in result.stderr


async def test_with_no_node_left_a_cell_stops_interrupted_and_resumable(
    ray_cluster: Any, tmp_path: Path
) -> None:
    from harness.distributed.cells import execute_on_cluster
    from harness.runs import plan_resume

    store = SQLiteStore(tmp_path / "s.sqlite")
    cluster = Cluster()
    plan = plan_run(scaffold="topk", task="circle_packing", iterations=1, seed=2)
    first = await execute_on_cluster(cluster, plan, store)
    assert first.status == "completed"
    for node in cluster.nodes:  # every node gone, and none comes back
        node.alive = False
    cluster.refresh = lambda: []  # type: ignore[method-assign]
    extend = plan_resume(store, first.run_id, iterations=2)
    summary = await execute_on_cluster(cluster, extend, store)
    assert (summary.status, summary.stop_reason) == ("interrupted", "engine_unavailable")
    run = store.get_run(first.run_id)
    assert "no Galapagos node is left" in run.error and run.iterations_done == 1
    cluster.close()
