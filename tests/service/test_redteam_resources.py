"""Red team: one client cannot exhaust the hub — queued-run quotas per token, caps on live
streams per client and in all, a deadline on reading a request, and a server whose open files
and threads stay flat however many reads it serves.

Findings (hub trial of 2026-11-26): one token queued 1,000 runs in 16 s (no quota); one
anonymous client held 200 event streams (no cap); connections that never finish their headers
stayed open (no header timeout); every burst of anonymous reads left SQLite read connections
open (store file descriptors 102 → 344 over three bursts of 300 GETs)."""

from __future__ import annotations

import asyncio
import os
import socket
import time
from pathlib import Path

import httpx
import pytest

from harness.service._db import ServiceDB
from harness.store.sqlite import SQLiteStore
from tests.service.conftest import (
    ServerProcess,
    hostile_task_root,
    launch,
    marker_task,
    stored_run,
    wait_status,
)


def _hub(tmp_path: Path) -> tuple[Path, Path]:
    store = tmp_path / "hub.sqlite"
    SQLiteStore(store).close()
    return store, hostile_task_root(tmp_path)


def _bearer(store: Path, name: str, **kw: object) -> dict[str, str]:
    return {"Authorization": f"Bearer {ServiceDB(store).create_token(name, **kw)}"}  # type: ignore[arg-type]


@pytest.mark.docker
@pytest.mark.slow
def test_a_token_over_its_quota_gets_429_while_other_tokens_runs_proceed(tmp_path: Path) -> None:
    store, root = _hub(tmp_path)
    greedy, modest = _bearer(store, "greedy"), _bearer(store, "modest")
    server = ServerProcess(store, root, "--max-queued-per-token", "2", local_sandbox=False).start()
    try:
        with httpx.Client(base_url=server.url, timeout=60) as c:
            mine = [launch(c, greedy, iterations=500, overrides=[]) for _ in range(2)]
            r = c.post(
                "/api/v1/runs",
                json={"task": "function_minimization", "scaffold": "topk", "iterations": 1},
                headers=greedy,
            )
            assert r.status_code == 429, r.text
            assert int(r.headers["retry-after"]) > 0
            assert r.headers["content-type"] == "application/problem+json"
            assert "quota" in r.json()["detail"]
            theirs = launch(c, modest, iterations=1, overrides=[])  # another token: queued
            for run_id in mine:
                assert c.post(f"/api/v1/runs/{run_id}/cancel", headers=greedy).status_code == 200
            done = wait_status(c, theirs, ("completed", "failed"), timeout=300)
            assert done["status"] == "completed", done["error"]
            # What greedy cancelled no longer counts against it.
            for run_id in mine:
                wait_status(c, run_id, ("interrupted",), timeout=120)
            assert launch(c, greedy, iterations=1, overrides=[])
    finally:
        server.stop()


async def _open_stream(client: httpx.AsyncClient, url: str, headers: dict[str, str]) -> object:
    """An open live stream (its response, headers read), or the refusal's status code."""
    request = client.build_request("GET", url, headers=headers)
    response = await client.send(request, stream=True)
    if response.status_code != 200:
        await response.aread()
        await response.aclose()
        return response
    return response


@pytest.mark.slow
async def test_live_streams_are_capped_per_client_and_in_all(tmp_path: Path) -> None:
    store, root = _hub(tmp_path)
    token = _bearer(store, "t")
    other = _bearer(store, "u")
    # A run that stays queued (no worker will take it): its streams stay open.
    run_id = stored_run(store, root / "hostile_min", status="queued")
    server = ServerProcess(
        store, root, "--max-streams-per-client", "2", "--max-streams", "3"
    ).start()
    url = f"{server.url}/api/v1/runs/{run_id}/stream"
    try:
        async with httpx.AsyncClient(timeout=30) as c:
            anon = [await _open_stream(c, url, {}) for _ in range(2)]
            assert [s.status_code for s in anon] == [200, 200]  # type: ignore[attr-defined]
            refused = await _open_stream(c, url, {})
            assert refused.status_code == 429  # type: ignore[attr-defined]
            assert int(refused.headers["retry-after"]) > 0  # type: ignore[attr-defined]
            assert "per client" in refused.json()["detail"]  # type: ignore[attr-defined]
            mine = await _open_stream(c, url, token)  # another client: the last slot in all
            assert mine.status_code == 200  # type: ignore[attr-defined]
            full = await _open_stream(c, url, other)
            assert full.status_code == 429 and "limit" in full.json()["detail"]  # type: ignore[attr-defined]
            await anon[0].aclose()  # type: ignore[attr-defined]
            # The slot comes back when the client goes away.
            for _ in range(50):
                again = await _open_stream(c, url, {})
                if again.status_code == 200:  # type: ignore[attr-defined]
                    break
                await asyncio.sleep(0.1)
            assert again.status_code == 200  # type: ignore[attr-defined]
            for s in (anon[1], mine, again):
                await s.aclose()  # type: ignore[attr-defined]
            # Pages still answer with every stream slot taken.
            assert (await c.get(f"{server.url}/runs/{run_id}")).status_code == 200
    finally:
        server.stop()


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes ``sock`` within ``seconds`` (reading whatever it sends)."""
    sock.settimeout(seconds)
    try:
        while sock.recv(4096):
            pass
        return True
    except (TimeoutError, ConnectionResetError):
        return False


@pytest.mark.slow
def test_connections_that_never_finish_a_request_are_closed(tmp_path: Path) -> None:
    store, root = _hub(tmp_path)
    server = ServerProcess(store, root, "--header-timeout", "1").start()
    try:
        partial = [
            b"",  # connects, sends nothing
            b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n",  # headers never finish
            b"GE",
            b"POST /api/v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n"
            b'Content-Type: application/json\r\n\r\n{"task":',  # the body never finishes
        ]
        socks = []
        for data in partial:
            s = socket.create_connection(("127.0.0.1", server.port))
            s.sendall(data)
            socks.append(s)
        started = time.monotonic()
        closed = [_closed_within(s, 8) for s in socks]
        assert closed == [True] * len(partial), closed
        assert time.monotonic() - started < 8
        # A client that sends its request in time is served, on a kept-alive connection too.
        with socket.create_connection(("127.0.0.1", server.port)) as s:
            s.settimeout(10)
            for _ in range(2):
                s.sendall(b"GET /api/v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                assert _response(s).startswith(b"HTTP/1.1 200")
        for s in socks:
            s.close()
    finally:
        server.stop()


def _response(sock: socket.socket) -> bytes:
    """One whole HTTP/1.1 response with a Content-Length (head and body may come apart)."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        body += sock.recv(65536)
    return head + b"\r\n\r\n" + body


def _fds(pid: int) -> tuple[int, int]:
    """(open file descriptors, those on the store's files) of process ``pid``."""
    total = store = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        total += 1
        try:
            store += ".sqlite" in os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
    return total, store


def _threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


async def _burst(base: str, paths: list[str], n: int) -> list[int]:
    limits = httpx.Limits(max_connections=32, max_keepalive_connections=32)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as c:
        responses = await asyncio.gather(*(c.get(paths[i % len(paths)]) for i in range(n)))
    return [r.status_code for r in responses]


@pytest.mark.slow
def test_file_descriptors_and_threads_stay_flat_over_bursts_of_reads(tmp_path: Path) -> None:
    """10 bursts of 300 anonymous reads, with a pause longer than the server's idle-thread
    lifetime in the middle (its worker threads retire and new ones start, as between the
    bursts of a real day): open files and threads grow by no more than 10 %, the store's
    files not at all."""
    store, root = _hub(tmp_path)
    marker_task(root, "probe_min", tmp_path / "unused")
    server = ServerProcess(store, root).start()
    try:
        with httpx.Client(base_url=server.url, timeout=60) as c:
            run_id = launch(c, _bearer(store, "t"), iterations=2)
            wait_status(c, run_id, ("completed",))
        paths = [  # reads and a page (bench/hub_load.py reads every page, with figures)
            "/api/v1/runs",
            f"/api/v1/runs/{run_id}",
            f"/api/v1/runs/{run_id}/programs",
            f"/api/v1/runs/{run_id}/lineage",
            f"/api/v1/runs/{run_id}/events",
            "/api/v1/status",
            f"/runs/{run_id}",
        ]
        assert set(asyncio.run(_burst(server.url, paths, 300))) == {200}  # warm-up
        samples = []
        for burst in range(10):
            if burst == 5:
                time.sleep(11)  # anyio retires worker threads idle for 10 s
            assert set(asyncio.run(_burst(server.url, paths, 300))) == {200}
            time.sleep(0.3)
            samples.append((*_fds(server.pid), _threads(server.pid)))
        fds, store_fds, threads = (list(column) for column in zip(*samples, strict=True))
        print(f"fds {fds}\nstore fds {store_fds}\nthreads {threads}")
        # Nothing grows past 10 % of what the first burst left (idle threads retiring is
        # not growth: their number may drop); store files stay flat over the second half.
        assert max(fds) <= 1.1 * fds[0], fds
        assert max(store_fds) <= 1.1 * store_fds[0], store_fds
        assert set(store_fds[5:]) == {store_fds[5]}, store_fds
        assert max(threads) <= 1.1 * threads[0], threads
    finally:
        server.stop()
