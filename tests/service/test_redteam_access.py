"""Red team: who may do what — login sessions that end when they should, token scopes and
expiry, the Host allow-list (DNS rebinding) and the origin check.

Findings (hub trial of 2026-11-26): the Host header was not checked, so a DNS-rebinding page
could read a hub's public data, and the CSRF origin check compared against that
attacker-controlled Host; the session cookie carried the bearer token itself, so logout could
not end a stolen session."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from harness.service import create_app
from harness.service._db import ServiceDB
from harness.store.sqlite import SQLiteStore
from tests.service.conftest import LOCAL, launch, settings, wait_status

BODY = {"task": "function_minimization", "scaffold": "topk", "iterations": 1, "overrides": [LOCAL]}


def _login(c: TestClient, token: str) -> str:
    """Log in through the form; the CSRF value of the page."""
    c.get("/login")
    csrf = str(c.cookies.get("galapagos_csrf"))
    r = c.post("/login", data={"token": token, "csrf": csrf}, follow_redirects=False)
    assert r.status_code == 303, r.text
    return csrf


def test_the_session_cookie_is_not_the_token_and_logging_out_ends_it(
    client: TestClient, token: str
) -> None:
    csrf = _login(client, token)
    session = str(client.cookies.get("galapagos_session"))
    assert session and token not in session and token.split("_", 2)[2] not in session
    assert client.post("/api/v1/runs", json=BODY, headers={"X-CSRF-Token": csrf}).status_code == 201
    r = client.post("/logout", data={"csrf": csrf}, follow_redirects=False)
    assert r.status_code == 303
    # A stolen copy of the cookie is worth nothing once its owner logged out.
    client.cookies.set("galapagos_session", session)
    r = client.post("/api/v1/runs", json=BODY, headers={"X-CSRF-Token": csrf})
    assert r.status_code == 401
    assert client.get("/api/v1/status").json()["authenticated"] is False


def test_revoking_a_token_ends_its_sessions(
    client: TestClient, token: str, hub_store: Path
) -> None:
    csrf = _login(client, token)
    assert client.get("/api/v1/status").json()["authenticated"] is True
    ServiceDB(hub_store).revoke_token("tester")
    assert client.get("/api/v1/status").json()["authenticated"] is False
    assert client.post("/api/v1/runs", json=BODY, headers={"X-CSRF-Token": csrf}).status_code == 401


def test_sessions_expire_and_time_out_when_idle(
    hub_store: Path, tmp_path: Path, token: str
) -> None:
    store = SQLiteStore(hub_store)
    for kind in ({"session_ttl_s": 1.0}, {"session_idle_s": 1.0}):
        with TestClient(create_app(store, settings(tmp_path / str(kind), **kind))) as c:
            _login(c, token)
            assert c.get("/api/v1/status").json()["authenticated"] is True
            time.sleep(1.3)
            assert c.get("/api/v1/status").json()["authenticated"] is False, kind
    store.close()


def test_token_scopes_and_expiry(client: TestClient, hub_store: Path) -> None:
    db = ServiceDB(hub_store)
    reader = {"Authorization": f"Bearer {db.create_token('reader', scope='read')}"}
    mine = {"Authorization": f"Bearer {db.create_token('mine', scope='launch')}"}
    other = {"Authorization": f"Bearer {db.create_token('other', scope='launch')}"}
    admin = {"Authorization": f"Bearer {db.create_token('admin', scope='admin')}"}
    r = client.post("/api/v1/runs", json=BODY, headers=reader)
    assert r.status_code == 403 and "scope launch" in r.json()["detail"]
    run_id = launch(client, mine, iterations=1)
    wait_status(client, run_id, ("completed",))
    # Another launch token may not touch it; its own token and an admin may.
    r = client.post(f"/api/v1/runs/{run_id}/resume", json={"iterations": 2}, headers=other)
    assert r.status_code == 403 and "admin" in r.json()["detail"]
    r = client.post(f"/api/v1/runs/{run_id}/resume", json={"iterations": 2}, headers=mine)
    assert r.status_code == 202
    wait_status(client, run_id, ("completed",))
    while client.get("/api/v1/status").json()["running"]:
        time.sleep(0.05)
    r = client.post(f"/api/v1/runs/{run_id}/resume", json={"iterations": 3}, headers=admin)
    assert r.status_code == 202
    wait_status(client, run_id, ("completed",))
    brief = {"Authorization": f"Bearer {db.create_token('brief', expires_in_s=1)}"}
    assert client.get("/api/v1/status", headers=brief).json()["authenticated"] is True
    time.sleep(1.2)
    r = client.get("/api/v1/status", headers=brief)
    assert r.status_code == 401 and "expired" in r.json()["detail"]


def test_a_read_token_reads_a_private_hub_but_writes_nothing(
    hub_store: Path, tmp_path: Path
) -> None:
    reader = {"Authorization": f"Bearer {ServiceDB(hub_store).create_token('r', scope='read')}"}
    store = SQLiteStore(hub_store)
    with TestClient(create_app(store, settings(tmp_path, public_read=False))) as c:
        assert c.get("/api/v1/runs").status_code == 401
        assert c.get("/api/v1/runs", headers=reader).status_code == 200
        assert c.post("/api/v1/runs", json=BODY, headers=reader).status_code == 403
    store.close()


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("127.0.0.1:8000", True),
        ("localhost:8000", True),
        ("[::1]:8000", True),
        ("LOCALHOST", True),
        ("hub.example.org", True),  # the configured public name
        ("evil.example:8000", False),  # a rebinding page names its own domain
        ("127.0.0.1.evil.example", False),
        ("", False),
        ("hub.example.org.evil.example", False),
    ],
)
def test_only_the_hubs_own_names_are_served(
    hub_store: Path, tmp_path: Path, host: str, allowed: bool
) -> None:
    store = SQLiteStore(hub_store)
    app = create_app(store, settings(tmp_path, public_names=("hub.example.org",)))
    with TestClient(app, base_url="http://127.0.0.1") as c:
        for path in ("/", "/runs", "/api/v1/runs", "/api/v1/status", "/static/hub.css"):
            r = c.get(path, headers={"Host": host})
            if allowed:
                assert r.status_code == 200, (path, r.status_code)
            else:
                assert r.status_code == 400, (path, r.status_code)
                assert r.headers["content-type"] == "application/problem+json"
                assert "not one of this hub's names" in r.json()["detail"]
    store.close()


def test_the_origin_check_compares_with_the_hubs_names_not_the_host_header(
    hub_store: Path, tmp_path: Path, token: str
) -> None:
    """A rebinding page's write carries a matching Origin and Host (both its own name); the
    hub refuses it because neither is one of its names."""
    store = SQLiteStore(hub_store)
    with TestClient(create_app(store, settings(tmp_path)), base_url="http://127.0.0.1") as c:
        csrf = _login(c, token)
        for host, origin, expected in (
            ("evil.example", "http://evil.example", 400),  # refused at the door (Host)
            ("127.0.0.1", "http://evil.example", 403),  # foreign origin
            ("127.0.0.1", "null", 403),
            ("127.0.0.1", "http://127.0.0.1", 201),
            ("127.0.0.1:8000", "http://localhost:8000", 201),  # a name of the hub's
        ):
            r = c.post(
                "/api/v1/runs",
                json=BODY,
                headers={"Host": host, "Origin": origin, "X-CSRF-Token": csrf},
            )
            assert r.status_code == expected, (host, origin, r.text)
    store.close()
