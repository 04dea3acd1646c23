"""Red team: no client input makes the hub answer 5xx or abort a response; every refusal is a
problem document (RFC 9457) saying what is wrong.

Finding (hub trial of 2026-11-26): 30 server errors in one pass — lone surrogates in any string
field of a launch or a resume, NaN/Infinity numbers, Unicode digits such as ``²`` in the
playground and resume forms, an over-long or non-ASCII ``Last-Event-ID`` (the stream
aborted), each a 500 or an aborted response with a traceback in the log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from harness.service._db import ServiceDB
from harness.store.sqlite import SQLiteStore
from tests.service.conftest import LOCAL, ServerProcess, hostile_task_root, launch, wait_status

SURROGATE = "\ud800"
LAUNCH = {"task": "function_minimization", "scaffold": "topk", "iterations": 1}


def _with(body: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    out = json.loads(json.dumps(body))
    node = out
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return out


#: Every string a launch carries (values and keys), with a lone surrogate in it.
SURROGATE_LAUNCHES = [
    _with(LAUNCH, ("task",), SURROGATE),
    _with(LAUNCH, ("scaffold",), "topk" + SURROGATE),
    {**LAUNCH, "overrides": [f"general.max_iterations={SURROGATE}"]},
    {**LAUNCH, "overrides": [f"{SURROGATE}=1"]},
    {**LAUNCH, SURROGATE: 1},
    {
        "task": "function_minimization",
        "composition": {"name": SURROGATE, "blocks": {"population": "keep_all"}},
    },
    {
        "task": "function_minimization",
        "composition": {"blocks": {SURROGATE: "x", "prompt": SURROGATE}, "loop": {SURROGATE: 1}},
    },
]


def _raw(body: Any) -> bytes:
    """JSON as a client may write it: ``\\ud800`` escapes and NaN/Infinity literals kept."""
    return json.dumps(body, ensure_ascii=True, allow_nan=True).encode()


def _is_problem(r: httpx.Response, status: tuple[int, ...]) -> dict[str, Any]:
    assert r.status_code in status, (r.status_code, r.text[:500])
    assert r.headers["content-type"] == "application/problem+json", r.headers
    body = dict(r.json())
    assert body["status"] == r.status_code and body["title"] and body["detail"]
    assert "\n" not in body["detail"]
    return body


@pytest.mark.parametrize("body", SURROGATE_LAUNCHES)
def test_lone_surrogates_in_a_launch_are_a_4xx_problem(
    client: TestClient, auth: dict[str, str], body: dict[str, Any]
) -> None:
    r = client.post("/api/v1/runs", content=_raw(body), headers={**auth, **_JSON})
    _is_problem(r, (400, 422))
    assert client.get("/api/v1/runs").json() == []


_JSON = {"content-type": "application/json"}


@pytest.mark.parametrize(
    "raw",
    [
        b'{"task": "function_minimization", "scaffold": "topk", "iterations": NaN}',
        b'{"task": "function_minimization", "scaffold": "topk", "seed": Infinity}',
        b'{"task": "function_minimization", "scaffold": "topk", "seed": -Infinity}',
        b'{"task": "function_minimization", "scaffold": "topk", "iterations": 1e400}',
        b'{"task": "function_minimization", "scaffold": "topk", "seed": 1' + b"0" * 5000 + b"}",
        b'{"task": "function_minimization", "scaffold": "topk", "overrides": [NaN]}',
        b'{"task": "\xff\xfe", "scaffold": "topk"}',
        b"[" * 5000 + b"]" * 5000,
        b'{"task": ' + b'{"a": ' * 3000 + b"1" + b"}" * 3000 + b"}",
        b"\xef\xbb\xbf{}",
        b"",
        b"null",
    ],
)
def test_unusual_launch_bodies_are_a_4xx_problem(
    client: TestClient, auth: dict[str, str], raw: bytes
) -> None:
    r = client.post("/api/v1/runs", content=raw, headers={**auth, **_JSON})
    _is_problem(r, (400, 422))


@pytest.mark.parametrize(
    "raw",
    [
        b'{"iterations": NaN}',
        b'{"max_cost": Infinity}',
        b'{"max_cost": NaN}',
        b'{"max_total_tokens": -Infinity}',
        b'{"iterations": "\\ud800"}',
        b'{"\\ud800": 1}',
        b'{"max_total_tokens": 1' + b"0" * 400 + b"}",
    ],
)
def test_unusual_resume_bodies_are_a_4xx_problem(
    client: TestClient, auth: dict[str, str], raw: bytes
) -> None:
    run_id = launch(client, auth, iterations=1)
    wait_status(client, run_id, ("completed",))
    r = client.post(f"/api/v1/runs/{run_id}/resume", content=raw, headers={**auth, **_JSON})
    _is_problem(r, (400, 422))


@pytest.mark.parametrize("digits", ["²", "١٢", "３", "1²", "9" * 40, "-1", "1.5"])
def test_unicode_and_odd_digits_in_forms_are_a_4xx_page(
    client: TestClient, token: str, digits: str
) -> None:
    client.get("/login")
    csrf = client.cookies.get("galapagos_csrf")
    client.post("/login", data={"token": token, "csrf": csrf})
    form = {
        "task": "function_minimization",
        "scaffold": "topk",
        "overrides": LOCAL,
        "csrf": csrf,
    }
    for field in ("iterations", "seed"):
        r = client.post("/playground", data={**form, field: digits}, follow_redirects=False)
        assert r.status_code == 400, (field, digits, r.status_code)
        assert "whole number" in r.text
    run_id = launch(client, {"Authorization": f"Bearer {token}"}, iterations=1)
    wait_status(client, run_id, ("completed",))
    r = client.post(
        f"/runs/{run_id}/resume", data={"iterations": digits, "csrf": csrf}, follow_redirects=False
    )
    assert r.status_code == 400, (digits, r.status_code)


@pytest.mark.parametrize(
    "target",
    [
        "/api/v1/runs?limit=%C2%B2",  # ²
        "/api/v1/runs?limit=1" + "0" * 5000,
        "/api/v1/runs?status=%ED%A0%80",  # a surrogate, as CESU-8 would write it
        "/api/v1/runs?task=%FF%FE",  # not UTF-8 at all
        "/api/v1/runs/RUN/events?after=NaN",
        "/api/v1/runs/RUN/events?after=" + "9" * 30,
        "/api/v1/runs/RUN/programs?order=" + "x" * 10_000,
        "/api/v1/leaderboard?benchmark=%00",
        "/api/v1/runs/%ED%A0%80",
        "/runs?status=" + "x" * 100,
        "/compare?run=%00&run=..%2F..",
        "/runs/%FF%FE/programs/%00",
    ],
)
def test_unusual_query_parameters_and_paths_are_a_4xx(
    client: TestClient, auth: dict[str, str], target: str
) -> None:
    run_id = launch(client, auth, iterations=1)
    r = client.get(target.replace("RUN", run_id))
    assert r.status_code < 500, (target, r.text[:300])
    if target.startswith("/api/") and r.status_code >= 400:
        _is_problem(r, (r.status_code,))


def test_odd_last_event_ids_never_abort_a_stream(tmp_path: Path) -> None:
    """On a real server: each odd ``Last-Event-ID`` gets the whole stream to its ``end``, and
    the server's log holds no traceback."""
    store = tmp_path / "hub.sqlite"
    SQLiteStore(store).close()
    auth = {"Authorization": f"Bearer {ServiceDB(store).create_token('t')}"}
    server = ServerProcess(store, hostile_task_root(tmp_path)).start()
    try:
        with httpx.Client(base_url=server.url, timeout=60) as c:
            run_id = launch(c, auth, iterations=2)
            wait_status(c, run_id, ("completed",))
            for value in (
                b"9" * 5000,
                "²".encode(),
                b"\xff\xfe\xfd",
                b"-5",
                b"1e9",
                b"3 4",
                str(2**63).encode(),
                b"9" * 19,
            ):
                with c.stream(
                    "GET", f"/api/v1/runs/{run_id}/stream", headers={"Last-Event-ID": value}
                ) as s:
                    assert s.status_code == 200, value
                    text = "".join(s.iter_text())
                assert "event: end" in text, (value, text[-300:])
    finally:
        server.stop()
    log = server.log_text()
    assert "Traceback" not in log and "Exception in ASGI application" not in log, log[-3000:]
