"""Sandbox overhead: warm pool vs cold container vs a bare subprocess, and throughput.

Prints, for a trivial candidate and for one that imports numpy, for both isolation units (a
fresh box in a reused zygote container, the default; a fresh single-use container, ``reuse=1``):

- latency (median, p95) through the warm pool, paced at a rate the pool can sustain;
- latency through a cold container per candidate (create → start → job → remove);
- latency of a bare local subprocess running the same program, without any sandbox;
- sustained evaluations/s with 2 concurrent workers through the warm pool;
- and, for comparison, the engine's own raw rate of fresh hardened containers
  (create → start → wait → remove of ``/bin/true``, 4 creator threads; measured before and after
  the sustained run, the mean is the reference), and the same for
  containers whose python3 imports what the candidate needs (numpy): every fresh container
  pays that import, so this is the ceiling for a pool of numpy containers on this machine.
  Machine CPU per container (``/proc/stat``) shows where the rate goes.

Usage: ``.venv/bin/python bench/sandbox_overhead.py [--quick] [--json]``.  Numbers depend on the
machine and on whatever else it runs; the script says what it measured, never asserts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import uuid
from typing import Any

from harness.sandbox.docker_backend import IMAGE_PYTHONPATH, DockerBackend, default_pool_creators
from harness.sandbox.hardening import ContainerSpec, create_hardened_container, minimal_env
from harness.sandbox.images import build_images
from harness.sandbox.protocol import Job, Limits

EVALUATOR = b"def evaluate(c):\n    return {'combined_score': float(c.call('solve'))}\n"
PROGRAMS = {
    "trivial": ("def solve():\n    return 0.5\n", ()),
    "numpy": (
        "import numpy as np\ndef solve():\n    return float(np.arange(10).mean())\n",
        ("numpy",),
    ),
}
LIMITS = Limits(wall_s=10.0, memory_mb=256, tmpfs_mb=16)


def job(kind: str) -> Job:
    source, preload = PROGRAMS[kind]
    return Job(
        mode="sealed",
        function="evaluate",
        candidate=source,
        files={"evaluator.py": EVALUATOR},
        limits=LIMITS,
        preload=preload,
    )


def busy_cpu_s() -> float:
    """CPU-seconds the whole machine has spent busy so far (``/proc/stat``), not counting
    time the hypervisor gave to other guests (steal) or guest time (already in user)."""
    with open("/proc/stat") as f:
        user, nice, system, _idle, _iowait, irq, softirq = (
            int(v) for v in f.readline().split()[1:8]
        )
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"median_ms": statistics.median(ordered) * 1e3, "p95_ms": p95 * 1e3, "n": len(ordered)}


def bare(kind: str, n: int) -> dict[str, float]:
    source, _ = PROGRAMS[kind]
    program = source + "print(solve())\n"
    samples = []
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", program], check=True, capture_output=True)
        samples.append(time.perf_counter() - t)
    return stats(samples)


async def cold(kind: str, n: int) -> dict[str, float]:
    backend = DockerBackend(pool_size=0)
    samples = []
    try:
        for _ in range(n):
            t = time.perf_counter()
            result = await backend.run(job(kind))
            samples.append(time.perf_counter() - t)
            assert result.status == "ok", result.error
    finally:
        await backend.aclose()
    return stats(samples)


async def warm(kind: str, n: int, interval_s: float, reuse: int | None = None) -> dict[str, float]:
    backend = DockerBackend(pool_size=4, reuse=reuse)
    assert backend.pool is not None
    full = backend.pool.spare
    samples = []
    try:
        await backend.prewarm(job(kind))
        while backend.pool.idle() < full:
            await asyncio.sleep(0.05)
        first = time.perf_counter()
        for _ in range(n):
            started = time.perf_counter()
            result = await backend.run(job(kind))
            samples.append(time.perf_counter() - started)
            assert result.status == "ok", result.error
            # Pace at a rate the pool sustains: at most one request per interval, and only
            # once the pool is full again (so a slow refill shows up as a lower rate, not as
            # cold starts counted as warm latency).
            await asyncio.sleep(max(0.0, interval_s - (time.perf_counter() - started)))
            while backend.pool.idle() < full:
                await asyncio.sleep(0.01)
        out = stats(samples)
        out["pool_hit_rate"] = backend.pool.hits / max(1, backend.pool.hits + backend.pool.misses)
        out["requests_per_s"] = n / (time.perf_counter() - first)
    finally:
        await backend.aclose()
    return out


async def sustained(
    kind: str, seconds: float, workers: int = 2, reuse: int | None = None
) -> dict[str, float]:
    backend = DockerBackend(pool_size=4, reuse=reuse)
    assert backend.pool is not None
    done = 0
    try:
        await backend.prewarm(job(kind))
        while backend.pool.idle() < backend.pool.spare:
            await asyncio.sleep(0.05)
        end = time.perf_counter() + seconds

        async def worker() -> None:
            nonlocal done
            while time.perf_counter() < end:
                result = await backend.run(job(kind))
                assert result.status == "ok", result.error
                done += 1

        start, cpu = time.perf_counter(), busy_cpu_s()
        await asyncio.gather(*(worker() for _ in range(workers)))
        elapsed, cpu = time.perf_counter() - start, busy_cpu_s() - cpu
        hits = backend.pool.hits / max(1, backend.pool.hits + backend.pool.misses)
    finally:
        await backend.aclose()
    return {
        "evals_per_s": done / elapsed,
        "evals": done,
        "pool_hit_rate": hits,
        "cpu_ms_per_eval": cpu / max(1, done) * 1e3,
    }


def engine_rate(
    seconds: float, threads: int = 4, command: tuple[str, ...] = ("/bin/true",)
) -> dict[str, float]:
    """Fresh hardened containers per second the engine alone manages running ``command``
    (no runner, no job)."""
    backend = DockerBackend(pool_size=0)  # for its client, labels and image tag
    image = backend.image_tag("python-eval")
    count = 0
    lock = threading.Lock()
    end = time.perf_counter() + seconds

    def loop() -> None:
        nonlocal count
        while time.perf_counter() < end:
            spec = ContainerSpec(
                image=image,
                command=command,
                limits=LIMITS,
                labels={
                    "galapagos": "1",
                    "galapagos.owner": backend.owner,
                    "galapagos.backend": backend.instance,
                },
                env=minimal_env(pythonpath=IMAGE_PYTHONPATH),
                name=f"galapagos-raw-{uuid.uuid4().hex[:10]}",
            )
            container = create_hardened_container(backend.client, spec)
            try:
                container.start()
                status = container.wait(timeout=30)["StatusCode"]
            finally:
                container.remove(force=True, v=True)
            if status != 0:
                raise RuntimeError(f"{' '.join(command)} exited {status} in the container")
            with lock:
                count += 1

    errors: list[BaseException] = []

    def guarded() -> None:
        try:
            loop()
        except BaseException as exc:  # noqa: BLE001 - reported after the join
            errors.append(exc)

    start, cpu = time.perf_counter(), busy_cpu_s()
    pool = [threading.Thread(target=guarded) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    elapsed, cpu = time.perf_counter() - start, busy_cpu_s() - cpu
    backend.close()
    if errors:
        raise errors[0]
    return {
        "containers_per_s": count / elapsed,
        "containers": count,
        "cpu_ms_per_container": cpu / max(1, count) * 1e3,
    }


async def main(quick: bool) -> dict[str, Any]:
    n, seconds, interval = (10, 8.0, 0.5) if quick else (30, 20.0, 0.5)
    build_images(["python-eval"])
    report: dict[str, Any] = {
        "pacing": f"sequential requests, at most one every {interval * 1e3:.0f} ms and only "
        "once the pool is full again; warm pool of up to 4 with "
        f"{default_pool_creators()} creator threads (one per core)",
        "load_before": os.getloadavg()[0],
    }
    for kind in PROGRAMS:
        report[kind] = {
            "bare_subprocess": bare(kind, n),
            "warm_pool": await warm(kind, n, interval),
            "warm_single_use": await warm(kind, n, interval, reuse=1),
            "cold_container": await cold(kind, max(5, n // 2)),
            # The engine's raw rate is measured just before and just after the sustained run
            # (this machine's speed drifts by tens of percent within minutes): the reference
            # is their mean.
            "engine_raw_4_threads_before": engine_rate(seconds),
            # The same engine rate for containers that also import what the pool preloads:
            # the ceiling a pool that pre-imports those modules can reach on this machine.
            "engine_raw_preload_4_threads": engine_rate(seconds, command=_preload_command(kind)),
            "sustained_2_workers": await sustained(kind, seconds),
            "sustained_single_use": await sustained(kind, seconds, reuse=1),
            "engine_raw_4_threads_after": engine_rate(seconds),
        }
        before, after = (report[kind][f"engine_raw_4_threads_{w}"] for w in ("before", "after"))
        report[kind]["engine_raw_4_threads"] = {
            key: (before[key] + after[key]) / 2 for key in before
        }
    report["load_after"] = os.getloadavg()[0]
    return report


def _preload_command(kind: str) -> tuple[str, ...]:
    imports = "; ".join(f"import {m}" for m in PROGRAMS[kind][1]) or "pass"
    return ("/usr/bin/python3", "-s", "-S", "-c", imports)


def _latency(s: dict[str, float]) -> str:
    return f"median {s['median_ms']:8.1f} ms   p95 {s['p95_ms']:8.1f} ms"


def render(report: dict[str, Any]) -> str:
    lines = [
        f"pacing: {report['pacing']}",
        f"machine load average: {report['load_before']:.1f} before, "
        f"{report['load_after']:.1f} after (cores: {os.cpu_count()})",
        "",
    ]
    for kind in PROGRAMS:
        r = report[kind]
        raw, pre = r["engine_raw_4_threads"], r["engine_raw_preload_4_threads"]
        before, after = r["engine_raw_4_threads_before"], r["engine_raw_4_threads_after"]
        sus, single = r["sustained_2_workers"], r["sustained_single_use"]
        bare_, warm_, cold_ = r["bare_subprocess"], r["warm_pool"], r["cold_container"]
        once = r["warm_single_use"]
        lines += [
            f"[{kind} candidate]",
            f"  bare subprocess   {_latency(bare_)}",
            f"  warm pool, boxes  {_latency(warm_)}   (hit rate {warm_['pool_hit_rate']:.0%}, "
            f"paced at {warm_['requests_per_s']:.2f} requests/s)",
            f"  warm, single-use  {_latency(once)}   (hit rate {once['pool_hit_rate']:.0%})",
            f"  sustained, boxes  {sus['evals_per_s']:.2f} evals/s with 2 workers, "
            f"{sus['cpu_ms_per_eval']:.0f} ms of machine CPU per evaluation",
            f"  cold container    {_latency(cold_)}",
            f"  warm/bare         median {warm_['median_ms'] / bare_['median_ms']:.3f}x"
            f"   p95 {warm_['p95_ms'] / bare_['p95_ms']:.3f}x   (goals <= 0.1x, <= 0.5x)",
            f"  cold/warm         median {cold_['median_ms'] / warm_['median_ms']:.1f}x"
            "   (goal >= 20x)",
            f"  sustained, 1-use  {single['evals_per_s']:.2f} evals/s with 2 workers = "
            f"{single['evals_per_s'] / raw['containers_per_s']:.0%} of the engine's raw rate; "
            f"{single['cpu_ms_per_eval']:.0f} ms of machine CPU per evaluation",
            f"  engine raw rate   {raw['containers_per_s']:.2f} fresh hardened containers/s "
            f"running /bin/true (4 threads; mean of {before['containers_per_s']:.2f} measured "
            f"before and {after['containers_per_s']:.2f} after; "
            f"{raw['cpu_ms_per_container']:.0f} ms CPU each)",
            f"  same, preloading  {pre['containers_per_s']:.2f} containers/s running python3 "
            f"importing {', '.join(PROGRAMS[kind][1]) or 'nothing'} "
            f"({pre['cpu_ms_per_container']:.0f} ms CPU each): sustained single-use = "
            f"{single['evals_per_s'] / pre['containers_per_s']:.0%} of it",
            "",
        ]
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples, shorter runs")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    result = asyncio.run(main(args.quick))
    print(json.dumps(result, indent=2) if args.json else render(result))
