"""The hub stays responsive under load: with 1,000 runs queued and 500 live streams open, every
kind of page and read still answers, a token can still launch, and the caps hold (the next
stream is refused with 429).  Behaviour only; ``bench/hub_load.py`` prints the figures."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from bench._hub_load import Hub, open_streams, pages, queue_runs, timed_get
from harness.service._db import ServiceDB
from harness.store.sqlite import SQLiteStore

pytestmark = [pytest.mark.slow, pytest.mark.docker]

STREAMS = 500


async def test_every_page_answers_under_1000_queued_runs_and_500_streams(tmp_path: Path) -> None:
    store = tmp_path / "hub.sqlite"
    SQLiteStore(store).close()
    ids = queue_runs(store, 1000)
    token = ServiceDB(store).create_token("t")
    hub = Hub.start(
        store,
        "--workers",
        "1",
        "--max-streams",
        str(STREAMS),
        "--max-streams-per-client",
        str(STREAMS),
    )
    limits = httpx.Limits(max_connections=STREAMS + 50, max_keepalive_connections=20)
    try:
        async with httpx.AsyncClient(timeout=120, limits=limits) as c:
            opened, refused = await open_streams(c, hub.url, ids[-50:], STREAMS)
            assert len(opened) == STREAMS and refused == []
            _, more = await open_streams(c, hub.url, ids[-1:], 1)
            assert more == [429]  # the cap in all
            for path in pages(ids[-1]):
                status, _ = await timed_get(c, hub.url + path)
                assert status == 200, path
            r = await c.post(
                f"{hub.url}/api/v1/runs",
                json={"task": "function_minimization", "scaffold": "topk", "iterations": 1},
                headers={"Authorization": f"Bearer {token}"},
            )
            assert r.status_code == 201, r.text
            status = (await c.get(f"{hub.url}/api/v1/status")).json()
            # The one worker keeps taking queued runs meanwhile (each is quick).
            assert status["queued"] >= 950
            for response in opened:
                await response.aclose()
    finally:
        hub.stop()
    assert "Traceback" not in hub.log.read_text()
