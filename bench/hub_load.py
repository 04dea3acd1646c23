"""The hub under load: how long its pages take with 1,000 queued runs and 500 open live
streams, what the streams cost it, and whether its open files and threads stay flat over 10
bursts of 300 anonymous reads.

Starts ``galapagos serve`` (Docker only, one worker: the queue's first run executes while the
rest wait, as on a busy hub) on a temporary store and prints:

- the seconds to queue 1,000 runs through the store;
- page latency (median, 95th percentile, max over every kind of page, 3 rounds) idle, then with
  500 streams open;
- the server's CPU seconds per minute without streams and holding 500 idle streams;
- open files and threads after each of 10 bursts of 300 reads (a pause longer than the
  server's idle-thread lifetime after the fifth).

Run: ``.venv/bin/python bench/hub_load.py [--streams 500] [--runs 1000]``.  Wall-clock figures
depend on what else the machine runs; the CPU figures less so.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._hub_load import Hub, open_streams, pages, queue_runs, timed_get  # noqa: E402
from harness.store.sqlite import SQLiteStore  # noqa: E402


def _figures(latencies: list[float]) -> str:
    ordered = sorted(latencies)
    p95 = ordered[max(0, int(0.95 * len(ordered)) - 1)]
    return (
        f"median {1000 * statistics.median(ordered):.0f} ms, p95 {1000 * p95:.0f} ms, "
        f"max {1000 * ordered[-1]:.0f} ms"
    )


async def _page_round(c: httpx.AsyncClient, base: str, paths: list[str]) -> list[float]:
    out = []
    for path in paths:
        status, seconds = await timed_get(c, base + path)
        if status != 200:
            raise SystemExit(f"{path}: HTTP {status}")
        out.append(seconds)
    return out


async def _cpu_per_minute(hub: Hub, seconds: float = 20) -> float:
    cpu0, t0 = hub.cpu_s(), time.perf_counter()
    await asyncio.sleep(seconds)
    return (hub.cpu_s() - cpu0) / (time.perf_counter() - t0) * 60


async def load(hub: Hub, ids: list[str], streams: int) -> None:
    limits = httpx.Limits(max_connections=streams + 100, max_keepalive_connections=50)
    async with httpx.AsyncClient(timeout=120, limits=limits) as c:
        paths = pages(ids[-1])
        idle = [s for _ in range(3) for s in await _page_round(c, hub.url, paths)]
        print(f"pages, {len(ids)} queued, no stream: {_figures(idle)}")
        base = await _cpu_per_minute(hub)
        print(f"server CPU, no stream (one run executing): {base:.1f} s/min")
        started = time.perf_counter()
        opened, refused = await open_streams(c, hub.url, ids[-50:], streams)
        print(
            f"{len(opened)} streams opened in {time.perf_counter() - started:.1f} s "
            f"({len(refused)} refused)"
        )
        loaded = [s for _ in range(3) for s in await _page_round(c, hub.url, paths)]
        print(f"pages, {len(ids)} queued, {len(opened)} streams open: {_figures(loaded)}")
        slowest = max(zip(loaded, paths * 3, strict=True))
        print(f"  slowest: {slowest[1]} {1000 * slowest[0]:.0f} ms")
        rate = await _cpu_per_minute(hub)
        print(
            f"server CPU with {len(opened)} streams open (one run executing): {rate:.1f} s/min, "
            f"so the streams cost {rate - base:.1f} s/min"
        )
        print(f"server open files {hub.open_files()}, threads {hub.threads()}")
        for r in opened:
            await r.aclose()


async def _burst(base: str, paths: list[str], n: int) -> None:
    limits = httpx.Limits(max_connections=32)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as c:
        codes = await asyncio.gather(*(c.get(paths[i % len(paths)]) for i in range(n)))
    if {r.status_code for r in codes} != {200}:
        raise SystemExit("a read failed during the bursts")


def bursts(hub: Hub, run_id: str) -> None:
    paths = pages(run_id)
    asyncio.run(_burst(hub.url, paths, 300))
    files, threads, cpu = [], [], []
    for n in range(10):
        if n == 5:
            time.sleep(11)
        before = hub.cpu_s()
        asyncio.run(_burst(hub.url, paths, 300))
        cpu.append(hub.cpu_s() - before)
        time.sleep(0.3)
        files.append(hub.open_files())
        threads.append(hub.threads())
    print(f"10 bursts of 300 reads: open files {files}")
    print(f"  threads {threads}")
    print(f"  server CPU per read: {1000 * statistics.median(cpu) / 300:.1f} ms (median burst)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--streams", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="galapagos-hub-load-") as tmp:
        store = Path(tmp) / "hub.sqlite"
        SQLiteStore(store).close()
        started = time.perf_counter()
        ids = queue_runs(store, args.runs)
        print(f"{args.runs} runs queued in {time.perf_counter() - started:.1f} s")
        hub = Hub.start(
            store,
            "--workers",
            "1",
            "--max-streams",
            str(args.streams),
            "--max-streams-per-client",
            str(args.streams),
        )
        try:
            asyncio.run(load(hub, ids, args.streams))
            bursts(hub, ids[-1])
        finally:
            hub.stop()


if __name__ == "__main__":
    main()
