"""The hub's own tables: a store made by an earlier hub upgrades in place (its tokens keep the
power they had), sessions live server-side, and quotas count what a token holds."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from harness.service._db import ServiceDB, _digest
from harness.store.sqlite import SQLiteStore


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


def _open_files(path: Path) -> list[str]:
    """The names of the files under ``path``'s folder this process holds open."""
    names = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(path.parent)):
            names.append(Path(target).name)
    return sorted(names)


def test_a_warmed_pool_keeps_its_open_files_when_every_connection_is_used(tmp_path: Path) -> None:
    """warm() opens each kept connection with its write-ahead log: a burst that uses all of
    them at once opens no further file (the hub's store files stay flat over bursts)."""
    path = tmp_path / "s.sqlite"
    writer = SQLiteStore(path)  # as the hub: the run writer made the store (in WAL mode)
    db = ServiceDB(path, connections=3)
    db.warm()
    warmed = _open_files(path)
    assert warmed.count("s.sqlite") == 4 and warmed.count("s.sqlite-wal") == 4, warmed
    taken = [db._acquire() for _ in range(3)]  # all at once, as concurrent requests take them
    for conn in taken:
        assert conn.execute("SELECT count(*) FROM service_tokens").fetchone() == (0,)
    for conn in taken:
        db._release(conn)
    assert _open_files(path) == warmed
    db.close()
    writer.close()
    assert _open_files(path) == []
