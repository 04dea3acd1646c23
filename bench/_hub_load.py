"""Load on a real hub: a thousand queued runs, hundreds of open live streams, bursts of reads.

Shared by ``bench/hub_load.py`` (the figures) and ``tests/service/test_load.py`` (the
behaviour: every page answers under the load, caps hold).  Runs are queued through the store's
own API (as ``galapagos serve`` would have queued them), streams are opened by one
asynchronous client, and the server is a real ``galapagos serve`` process.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from harness.core.store import RunRecord
from harness.runs import new_run_id, plan_run
from harness.service._db import ServiceDB
from harness.store.sqlite import SQLiteStore

ROOT = Path(__file__).resolve().parents[1]


def queue_runs(store: Path, n: int, task: str = "function_minimization") -> list[str]:
    """``n`` runs of topk on ``task``, stored ``queued`` and in the hub's queue, as launches
    would leave them (one plan, validated once)."""
    plan = plan_run(scaffold="topk", task=task, iterations=1)
    config = plan.config.model_dump(mode="json")
    writer = SQLiteStore(store)
    db = ServiceDB(store)
    ids = []
    try:
        for _ in range(n):
            record = RunRecord(
                id=new_run_id() + f"-{len(ids):04d}",
                scaffold=plan.spec.name,
                task=plan.task.name,
                task_path=str(plan.task.path),
                config=config,
                seed=plan.config.seed,
                max_iterations=plan.config.general.max_iterations,
                status="queued",
                owner="",
                task_hash=plan.task.digest(),
            )
            writer.create_run(record)
            db.enqueue(record.id, {})
            ids.append(record.id)
    finally:
        writer.close()
        db.close()
    return ids


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Hub:
    """A ``galapagos serve`` process on a free loopback port."""

    proc: subprocess.Popen[bytes]
    url: str
    log: Path

    @classmethod
    def start(cls, store: Path, *args: str, timeout: float = 60) -> Hub:
        port = _port()
        log = store.parent / f"serve-{port}.log"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "GALAPAGOS_"))}
        with log.open("ab") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "harness.cli", "serve", "--port", str(port),
                 "--store", str(store), *args],
                stdout=out, stderr=out, cwd=ROOT, env=env,
            )  # fmt: skip
        url = f"http://127.0.0.1:{port}"
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if proc.poll() is not None:
                raise RuntimeError(f"the hub exited: {log.read_text()[-2000:]}")
            try:
                if httpx.get(url + "/api/v1/status", timeout=2).status_code == 200:
                    return cls(proc, url, log)
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        proc.kill()
        raise RuntimeError(f"the hub did not start: {log.read_text()[-2000:]}")

    def cpu_s(self) -> float:
        """CPU seconds the server process has used (user + system)."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def open_files(self) -> int:
        return len(os.listdir(f"/proc/{self.proc.pid}/fd"))

    def threads(self) -> int:
        return len(os.listdir(f"/proc/{self.proc.pid}/task"))

    def stop(self) -> None:
        self.proc.send_signal(2)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


async def open_streams(
    client: httpx.AsyncClient, url: str, run_ids: list[str], n: int
) -> tuple[list[httpx.Response], list[int]]:
    """``n`` live streams over ``run_ids`` in turn, opened at once: the open ones (headers
    read, body left unread) and the status codes of those refused."""

    async def one(i: int) -> httpx.Response:
        request = client.build_request(
            "GET", f"{url}/api/v1/runs/{run_ids[i % len(run_ids)]}/stream"
        )
        return await client.send(request, stream=True)

    responses = await asyncio.gather(*(one(i) for i in range(n)))
    opened = [r for r in responses if r.status_code == 200]
    refused = []
    for r in responses:
        if r.status_code != 200:
            refused.append(r.status_code)
            await r.aclose()
    return opened, refused


async def timed_get(client: httpx.AsyncClient, url: str) -> tuple[int, float]:
    started = time.perf_counter()
    r = await client.get(url)
    return r.status_code, time.perf_counter() - started


def pages(run_id: str) -> list[str]:
    """Every kind of page and read the hub serves, for one run."""
    return [
        "/",
        "/hub",
        "/hub/topk",
        "/runs",
        f"/runs/{run_id}",
        f"/runs/{run_id}/lineage",
        "/tasks",
        "/tasks/function_minimization",
        "/leaderboard",
        "/playground",
        "/docs",
        "/api/v1/runs?limit=50",
        f"/api/v1/runs/{run_id}",
        f"/api/v1/runs/{run_id}/events",
        "/api/v1/tasks",
        "/api/v1/scaffolds",
        "/api/v1/status",
    ]
