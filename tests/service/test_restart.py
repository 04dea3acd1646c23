"""A real ``galapagos serve`` process: it stops promptly with a live stream open, and runs that
were running or queued when it stopped — gracefully or killed — complete after a restart."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx
import pytest

from harness.service._db import ServiceDB
from tests.service.conftest import ServerProcess, hostile_task_root, launch

SLOW = 30  # iterations of the long run: long enough to be caught mid-run twice


def _run(server: ServerProcess, run_id: str) -> dict:
    return dict(httpx.get(f"{server.url}/api/v1/runs/{run_id}", timeout=10).json())


def _wait(server: ServerProcess, run_id: str, test, timeout: float = 180) -> dict:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        data = _run(server, run_id)
        if test(data):
            return data
        time.sleep(0.1)
    raise AssertionError(f"run {run_id}: {_run(server, run_id)}")


@pytest.mark.slow
def test_running_and_queued_runs_survive_a_stop_and_a_kill(tmp_path: Path) -> None:
    store = tmp_path / "hub.sqlite"
    token = ServiceDB(_init(store)).create_token("ops")
    auth = {"Authorization": f"Bearer {token}"}
    root = hostile_task_root(tmp_path)

    first = ServerProcess(store, root).start()
    with httpx.Client(base_url=first.url, timeout=30) as c:
        long = launch(c, auth, iterations=SLOW)
        queued = launch(c, auth, iterations=3)  # one worker: waits behind the long run
        reference = launch(c, auth, iterations=SLOW)  # same run, never interrupted
    _wait(first, long, lambda r: r["iterations_done"] >= 2)
    assert _run(first, queued)["status"] == "queued"

    # A client holding the live stream open does not hold the shutdown.
    seen: list[str] = []

    def listen() -> None:
        try:
            with httpx.stream("GET", f"{first.url}/api/v1/runs/{long}/stream", timeout=60) as s:
                for line in s.iter_lines():
                    seen.append(line)
        except httpx.HTTPError:
            seen.append("<broken>")

    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    while not any(line.startswith("event: progress") for line in seen):
        time.sleep(0.05)
    first.stop()  # SIGINT; waits for the process (up to 30 s) or fails
    listener.join(10)
    assert not listener.is_alive()  # the stream ended with the server
    # A graceful stop: the app's shutdown ran to its end, no traceback, Ctrl-C's exit code.
    assert first.proc is not None and first.proc.returncode == 130
    log = first.log.read_text()
    assert "Application shutdown complete" in log and "Traceback" not in log, log[-3000:]

    second = ServerProcess(store, root).start()  # resumes the long run, then the others
    _wait(second, long, lambda r: r["status"] == "running" and r["iterations_done"] >= 4)
    assert _run(second, queued)["status"] == "queued"
    second.kill()  # SIGKILL mid-run: no chance to clean up
    # Queue rows say what to continue; the dead owner makes the run read as interrupted.
    third = ServerProcess(store, root).start()
    try:
        done = {
            rid: _wait(third, rid, lambda r: r["status"] == "completed")
            for rid in (long, queued, reference)
        }
        lineages = {
            rid: httpx.get(f"{third.url}/api/v1/runs/{rid}/lineage", timeout=10).json()["nodes"]
            for rid in (long, reference)
        }
    finally:
        third.stop()
    assert done[long]["iterations_done"] == SLOW and done[queued]["iterations_done"] == 3
    # Stopped, resumed, killed and resumed again, the run ends where the uninterrupted one does.
    assert lineages[long] == lineages[reference]
    assert done[long]["best_score"] == done[reference]["best_score"]
    assert done[long]["tokens"] == done[reference]["tokens"]


def _init(store: Path) -> Path:
    from harness.store.sqlite import SQLiteStore

    SQLiteStore(store).close()
    return store
