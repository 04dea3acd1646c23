"""Scale-out figures on a simulated Ray cluster: latency, throughput per node count, store trips.

Starts ``ray.cluster_utils.Cluster`` on loopback (a head that runs nothing, three worker nodes
with the ``galapagos`` resource and two container slots each; usage statistics off) and prints:

- **latency**: one real evaluation at a time (``circle_packing``'s evaluator on its initial
  program, warm pool on) through the local Docker backend, then through ``RayBackend`` on one
  node: median and mean seconds per evaluation, and the difference (what Ray adds);
- **throughput**: ``--jobs`` evaluations kept ``capacity`` deep in flight through 1, 2 and 3
  nodes (and the local backend with the same container caps), evaluations per second, with this
  process's CPU seconds;
- **store**: round trips to the head's store actor (a read and a heartbeat write) against the
  same calls on the local SQLite store.

Every simulated node shares this machine's cores and its one Docker engine: the throughput rows
say what one machine does when split into nodes, not what real nodes add (docs/scale-out.md
turns the per-node figures into a model for 8 and 64 nodes).

    .venv/bin/python bench/ray_scale.py [--jobs 40] [--latency 15]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.core.config import EvaluatorConfig  # noqa: E402
from harness.core.store import RunRecord  # noqa: E402
from harness.distributed.cluster import Cluster  # noqa: E402
from harness.evaluation.driver import TaskEvaluator  # noqa: E402
from harness.runs import plan_run  # noqa: E402
from harness.runtime import Runtime  # noqa: E402
from harness.store.sqlite import SQLiteStore  # noqa: E402

WORKER = {"num_cpus": 1, "resources": {"galapagos": 1, "galapagos_slots": 2}}


def task() -> Any:
    return plan_run(scaffold="topk", task="circle_packing", iterations=1).task


async def evaluator(runtime: Runtime, run_id: str) -> TaskEvaluator:
    loaded = task()
    backend = await runtime.backend(EvaluatorConfig(), run_id)
    return TaskEvaluator(loaded, backend, run_id=run_id, close_backend=True)


async def latency(runtime: Runtime, n: int, run_id: str, overheads: list[float]) -> list[float]:
    """``n`` evaluations one at a time: each one's seconds; ``overheads`` gets each one's
    seconds outside the sandbox job itself (the transport: Ray's, or none)."""
    ev = await evaluator(runtime, run_id)
    code = ev.task.initial_program
    await ev.evaluate(code, program_id="warm", iteration=0)  # canaries, image, pool
    out = []
    for i in range(n):
        await asyncio.sleep(0.3)  # the pool refills, as between a run's iterations
        started = time.perf_counter()
        result = await ev.evaluate(code, program_id=f"p{i}", iteration=i)
        out.append(time.perf_counter() - started)
        overheads.append(out[-1] - result.duration_s)
        assert result.status == "ok", result
    await ev.aclose()
    return out


async def throughput(runtime: Runtime, jobs: int, depth: int, run_id: str) -> tuple[float, float]:
    ev = await evaluator(runtime, run_id)
    code = ev.task.initial_program
    await asyncio.gather(*(ev.evaluate(code, program_id="w", iteration=0) for _ in range(depth)))
    gate = asyncio.Semaphore(depth)

    async def one(i: int) -> None:
        async with gate:
            result = await ev.evaluate(code, program_id=f"p{i}", iteration=i)
            assert result.status == "ok", result

    agents = await _agents_cpu(runtime)
    cpu, started = time.process_time(), time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(jobs)))
    wall = time.perf_counter() - started
    spent = time.process_time() - cpu + (await _agents_cpu(runtime)) - agents
    await ev.aclose()
    return jobs / wall, spent


async def _agents_cpu(runtime: Runtime) -> float:
    """CPU seconds the node agents used so far (0 without a cluster)."""
    if runtime.cluster is None:
        return 0.0
    return sum(row.get("cpu_s", 0.0) for row in await runtime.cluster.load() if row["alive"])


def only(cluster: Cluster, count: int) -> None:
    """This driver uses the first ``count`` nodes (the others idle)."""
    for i, node in enumerate(sorted(cluster._nodes.values(), key=lambda n: n.node_id)):
        node.alive = i < count


def store_trips(cluster: Cluster, path: Path, n: int = 200) -> dict[str, float]:
    from harness.distributed.store import RemoteStore

    local = SQLiteStore(path)
    local.create_run(
        RunRecord(
            id="r",
            scaffold="s",
            task="t",
            task_path="",
            config={},
            seed=0,
            max_iterations=1,
            owner="o",
        )
    )
    remote = RemoteStore(cluster.store_actor(path))
    out = {}
    for name, store in (("local", local), ("ray", remote)):
        store.get_run("r")  # the actor's start-up is not a round trip
        started = time.perf_counter()
        for _ in range(n):
            store.get_run("r")
        out[f"{name}_read_ms"] = (time.perf_counter() - started) / n * 1000
        started = time.perf_counter()
        for _ in range(n):
            store.leases.beat("r", "o")
        out[f"{name}_write_ms"] = (time.perf_counter() - started) / n * 1000
    return out


def show(name: str, values: list[float]) -> str:
    return (
        f"{name:<14} median {statistics.median(values):.3f} s  mean "
        f"{statistics.mean(values):.3f} s  (n={len(values)})"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=40)
    parser.add_argument("--latency", type=int, default=15)
    parser.add_argument(
        "--parts", default="latency,throughput,store", help="Which figures (comma-separated)."
    )
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    import ray
    from ray.cluster_utils import Cluster as RayCluster

    started = time.perf_counter()
    sim = RayCluster(
        initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False}
    )
    for _ in range(3):
        sim.add_node(**WORKER)
    ray.init(address=sim.address, namespace="galapagos", log_to_driver=False)
    sim.wait_for_nodes()
    print(f"cluster of 3 worker nodes up in {time.perf_counter() - started:.1f} s")
    try:
        cluster = Cluster()
        if "latency" in parts:
            local_extra: list[float] = []
            ray_extra: list[float] = []
            # The same cap (and so warm pool) as a node's: two containers.
            async with Runtime(max_containers=2) as local:
                alone = await latency(local, args.latency, "bench-local", local_extra)
            only(cluster, 1)
            async with Runtime(cluster=cluster) as remote:
                through = await latency(remote, args.latency, "bench-ray", ray_extra)
            print(show("local", alone))
            print(show("ray, 1 node", through))
            added = statistics.median(through) - statistics.median(alone)
            print(f"added by Ray: {added * 1000:+.0f} ms per evaluation (median)")
            extra = statistics.median(ray_extra) - statistics.median(local_extra)
            print(
                f"time outside the sandbox job: local {statistics.median(local_extra) * 1000:.1f}"
                f" ms, ray {statistics.median(ray_extra) * 1000:.1f} ms (median): the transport "
                f"adds {extra * 1000:+.1f} ms"
            )
        if "throughput" in parts:
            print(
                f"throughput over {args.jobs} evaluations (evaluations/s; CPU s of this process "
                "plus, through Ray, the node agents; containers excluded):"
            )
        for nodes in (1, 2, 3) if "throughput" in parts else ():
            depth = 2 * nodes
            async with Runtime(max_containers=depth) as local:
                local_rate, local_cpu = await throughput(local, args.jobs, depth, f"t-l{nodes}")
            only(cluster, nodes)
            async with Runtime(cluster=cluster) as remote:
                rate, cpu = await throughput(remote, args.jobs, depth, f"t-r{nodes}")
            print(
                f"  {nodes} node(s), {depth} in flight: ray {rate:.2f}/s (CPU {cpu:.1f} s)"
                f"  | local, cap {depth}: {local_rate:.2f}/s (CPU {local_cpu:.1f} s)"
            )
        only(cluster, 3)
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            trips = store_trips(cluster, Path(tmp) / "s.sqlite") if "store" in parts else {}
        if trips:
            print("head store per call: " + ", ".join(f"{k} {v:.2f} ms" for k, v in trips.items()))
        cluster.close()
    finally:
        ray.shutdown()
        sim.shutdown()


if __name__ == "__main__":
    asyncio.run(main())
