"""Red team: an endpoint URL that carries credentials (as some gateways require) never reaches a
reader, the store or a log — while runs still use it.

Finding (hub trial of 2026-11-26): a hub started with
``--api-base https://user:pass@host/v1?api-key=…`` showed the credentials to anonymous
readers on the run's API record, the runs list and the run page."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from harness.llm.offline import OfflineServer, start_offline_server
from harness.service._db import ServiceDB
from harness.store.sqlite import SQLiteStore
from tests.service.conftest import ServerProcess, hostile_task_root

pytestmark = [pytest.mark.docker, pytest.mark.slow]

PASSWORD = "pa55word-XYZ-4242"
QUERY_KEY = "SECRETKEY-1234567"


@pytest.fixture
def endpoint() -> Iterator[OfflineServer]:
    """A real OpenAI-compatible endpoint on loopback (the offline model): the hub's runs
    reach it through the credentialed URL."""
    server = start_offline_server(seed=0)
    try:
        yield server
    finally:
        server.close()


def _wait_end(c: httpx.Client, run_id: str, timeout: float = 240) -> dict:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        data = dict(c.get(f"/api/v1/runs/{run_id}").json())
        if data["status"] not in ("queued", "running"):
            return data
        time.sleep(0.3)
    raise AssertionError(f"run {run_id} did not end")


def _public_reads(c: httpx.Client, run_id: str) -> list[str]:
    paths = [
        "/",
        "/runs",
        f"/runs/{run_id}",
        f"/runs/{run_id}/lineage",
        f"/runs/{run_id}/programs/p0",
        f"/runs/{run_id}/programs/p1",
        "/leaderboard",
        "/api/v1/runs",
        f"/api/v1/runs/{run_id}",
        f"/api/v1/runs/{run_id}/events",
        f"/api/v1/runs/{run_id}/lineage",
        f"/api/v1/runs/{run_id}/programs/p0",
        f"/api/v1/runs/{run_id}/programs/p1",
        f"/api/v1/runs/{run_id}/stream",
        "/api/v1/status",
    ]
    return [c.get(path).text for path in paths]


def test_endpoint_credentials_reach_no_reader_store_or_log(
    tmp_path: Path, endpoint: OfflineServer
) -> None:
    store = tmp_path / "hub.sqlite"
    SQLiteStore(store).close()
    auth = {"Authorization": f"Bearer {ServiceDB(store).create_token('t')}"}
    root = hostile_task_root(tmp_path)
    with_user = endpoint.base_url.replace("http://", f"http://alice:{PASSWORD}@")
    urls = {
        # A path the endpoint refuses: the run cannot start, and its error, naming the
        # endpoint, is what readers see.
        "failing": f"{with_user.removesuffix('/v1')}/refused?api-key={QUERY_KEY}",
        # User-info and a key in the query, as some gateways want it: the run talks to the
        # endpoint through them and completes.
        "working": f"{with_user}?api-key={QUERY_KEY}",
    }
    seen: list[str] = []
    logs: list[str] = []
    runs: dict[str, str] = {}
    for name, url in urls.items():
        server = ServerProcess(
            store, root, "--api-base", url, "--model", "galapagos-offline", local_sandbox=False
        ).start()
        try:
            with httpx.Client(base_url=server.url, timeout=60) as c:
                r = c.post(
                    "/api/v1/runs",
                    json={"task": "function_minimization", "scaffold": "topk", "iterations": 2},
                    headers=auth,
                )
                assert r.status_code == 201, r.text
                runs[name] = r.json()["run"]["run_id"]
                done = _wait_end(c, runs[name])
                if name == "working":
                    assert done["status"] == "completed", done["error"]
                    assert done["tokens"] > 0  # the LLM calls went through the full URL
                else:
                    assert done["status"] == "failed" and "***" in done["error"], done
                run_page = c.get(f"/runs/{runs[name]}").text
                assert "***@127.0.0.1" in run_page  # the endpoint shown, its secrets not
                for run_id in runs.values():
                    seen += _public_reads(c, run_id)
        finally:
            server.stop()
        logs.append(server.log_text())
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("hub.sqlite*"))
    for secret in (PASSWORD, QUERY_KEY):
        assert all(secret not in text for text in seen), secret
        assert all(secret not in text for text in logs), secret
        assert secret.encode() not in stored, secret
