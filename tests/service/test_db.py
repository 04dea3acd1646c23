"""The hub's own tables: a store made by an earlier hub upgrades in place (its tokens keep the
power they had), sessions live server-side, and quotas count what a token holds."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from harness.service._db import ServiceDB, _digest


def test_a_store_from_before_scopes_and_sessions_upgrades_in_place(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:  # the first layout, as hubs before scopes wrote it
        conn.executescript(
            """
            CREATE TABLE service_tokens (
                id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, digest TEXT NOT NULL,
                created_at REAL NOT NULL, last_used_at REAL, revoked_at REAL
            );
            CREATE TABLE service_queue (
                run_id TEXT PRIMARY KEY, state TEXT NOT NULL, options TEXT NOT NULL,
                enqueued_at REAL NOT NULL, started_at REAL, finished_at REAL, error TEXT DEFAULT ''
            );
            """
        )
        conn.execute(
            "INSERT INTO service_tokens VALUES ('abcd1234', 'old', ?, ?, NULL, NULL)",
            (_digest("s3cret"), time.time()),
        )
        conn.execute("INSERT INTO service_queue VALUES ('r1', 'queued', '{}', 1.0, NULL, NULL, '')")
    db = ServiceDB(path)
    info = db.check_token("gal_abcd1234_s3cret")
    assert info is not None and info.scope == "admin" and info.expires_at is None
    assert [i.run_id for i in db.pending()] == ["r1"] and db.pending()[0].token_id == ""
    ServiceDB(path)  # opening again changes nothing
    assert db.check_token("gal_abcd1234_s3cret") is not None


def test_sessions_and_queue_counts(tmp_path: Path) -> None:
    db = ServiceDB(tmp_path / "s.sqlite", connections=2)
    token = db.check_token(db.create_token("t", expires_in_s=3600))
    assert token is not None and token.scope == "launch"
    session, ends = db.create_session(token, ttl_s=10 * 86400)
    assert ends <= token.expires_at  # type: ignore[operator]  # never outlives its token
    assert db.check_session(session, idle_s=60) is not None
    assert db.check_session(session + "x", idle_s=60) is None
    assert _digest(session) in (tmp_path / "s.sqlite").read_bytes().decode("latin-1")
    assert session not in (tmp_path / "s.sqlite").read_bytes().decode("latin-1")
    db.end_session(session)
    assert db.check_session(session, idle_s=60) is None
    db.enqueue("a", {}, token.id)
    db.enqueue("b", {}, token.id)
    db.set_state("b", "done")
    assert db.in_queue(token.id) == 1 and db.in_queue("other") == 0
    db.close()
