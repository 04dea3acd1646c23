"""The store file's one migration list: numbered in order, idempotent, every path to the
current version gives the same schema, and a file newer than this code is refused with one line
before anything is written."""

from __future__ import annotations

import gzip
import shutil
import sqlite3
from pathlib import Path

import pytest

from harness.core.errors import StoreError
from harness.service._db import ServiceDB
from harness.store import SCHEMA_VERSION, SQLiteReader, SQLiteStore
from harness.store.schema import MIGRATIONS, AddColumn, apply
from tests.cli.test_catalog import galapagos


def schema_of(path: Path) -> dict[str, object]:
    """Every table's columns (name, type, not-null, default, key) and every index, by name."""
    conn = sqlite3.connect(path)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        shape: dict[str, object] = {
            t: [tuple(c[1:]) for c in conn.execute(f"PRAGMA table_info({t})")] for t in tables
        }
        for name, table in conn.execute(
            "SELECT name, tbl_name FROM sqlite_master WHERE type='index' AND sql IS NOT NULL"
        ):
            shape[f"index {name}"] = (
                table,
                [r[2] for r in conn.execute(f"PRAGMA index_info({name})")],
            )
        return shape
    finally:
        conn.close()


def at_version(path: Path, version: int) -> None:
    """A file as the code of schema ``version`` left it."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    for migration in MIGRATIONS[:version]:
        for step in migration.steps:
            apply(conn, step)
    conn.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(version),))
    conn.close()


def version_of(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0])
    finally:
        conn.close()


def unpacked_store(fixture: Path, tmp_path: Path, version: int) -> Path:
    """A gzipped store fixture written by an older release, unpacked into ``tmp_path``
    (checked to be at schema ``version``)."""
    path = tmp_path / "store.sqlite"
    with gzip.open(fixture) as src, path.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    assert version_of(path) == version
    return path


def test_migrations_are_numbered_in_order_and_say_what_they_are_for() -> None:
    assert [m.version for m in MIGRATIONS] == list(range(1, len(MIGRATIONS) + 1))
    assert SCHEMA_VERSION == len(MIGRATIONS) == 8
    assert all(m.summary for m in MIGRATIONS)
    # Each changes tables but v8, which changes only what a column holds (checkpoint deltas):
    # its version alone keeps an older Galapagos from misreading the file.
    assert [m.version for m in MIGRATIONS if not m.steps] == [8]


def test_every_step_is_idempotent(tmp_path: Path) -> None:
    SQLiteStore(tmp_path / "s.sqlite").close()
    fresh = schema_of(tmp_path / "s.sqlite")
    conn = sqlite3.connect(tmp_path / "s.sqlite", isolation_level=None)
    for migration in MIGRATIONS:
        for step in migration.steps:
            if isinstance(step, str):
                assert "IF NOT EXISTS" in step or step.startswith("DROP TABLE IF EXISTS"), step
            apply(conn, step)
    conn.close()
    assert schema_of(tmp_path / "s.sqlite") == fresh


def test_the_check_that_columns_exist_can_fail(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "x.sqlite", isolation_level=None)
    conn.execute("CREATE TABLE t (a TEXT)")
    apply(conn, AddColumn("t", "b", "REAL"))
    apply(conn, AddColumn("t", "b", "REAL"))
    assert [r[1] for r in conn.execute("PRAGMA table_info(t)")] == ["a", "b"]
    conn.close()


@pytest.mark.parametrize("version", range(SCHEMA_VERSION))
def test_a_file_at_any_older_version_upgrades_to_the_fresh_schema(
    tmp_path: Path, version: int
) -> None:
    SQLiteStore(tmp_path / "fresh.sqlite").close()
    old = tmp_path / f"v{version}.sqlite"
    if version:
        at_version(old, version)
    SQLiteStore(old).close()
    assert version_of(old) == SCHEMA_VERSION
    assert schema_of(old) == schema_of(tmp_path / "fresh.sqlite")


def test_a_hub_upgraded_apart_before_v6_joins_the_one_list(tmp_path: Path) -> None:
    """Before v6 the hub versioned its tables in ``service_meta`` (v2: scopes, sessions), so a
    store at v4 may already hold everything v5 and v6 create."""
    SQLiteStore(tmp_path / "fresh.sqlite").close()
    path = tmp_path / "s.sqlite"
    at_version(path, 4)
    conn = sqlite3.connect(path, isolation_level=None)
    for migration in MIGRATIONS[4:]:
        for step in migration.steps:
            if step != "DROP TABLE IF EXISTS service_meta":
                apply(conn, step)
    conn.execute("CREATE TABLE service_meta (key TEXT PRIMARY KEY, value TEXT)")
    conn.execute("INSERT INTO service_meta VALUES ('service_schema_version', '2')")
    conn.execute(
        "INSERT INTO service_tokens (id, name, digest, created_at, scope) "
        "VALUES ('t1', 'ci', 'x', 1.0, 'read')"
    )
    conn.close()
    db = ServiceDB(path)  # the hub may be the first to open it
    assert [(t.name, t.scope) for t in db.tokens()] == [("ci", "read")]
    db.close()
    assert version_of(path) == SCHEMA_VERSION
    assert schema_of(path) == schema_of(tmp_path / "fresh.sqlite")


def _newer(path: Path) -> bytes:
    SQLiteStore(path).close()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(
        "UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),)
    )
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path.read_bytes()


def test_a_newer_store_is_refused_by_every_opener_and_left_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    before = _newer(path)
    message = (
        f"run store {path} has schema v{SCHEMA_VERSION + 1}, newer than this Galapagos "
        f"(v{SCHEMA_VERSION}); upgrade Galapagos or use another --store"
    )
    for opener in (SQLiteStore, SQLiteReader, ServiceDB):
        with pytest.raises(StoreError) as caught:
            opener(path)
        assert str(caught.value) == message
    assert path.read_bytes() == before
    assert version_of(path) == SCHEMA_VERSION + 1


def test_the_cli_refuses_a_newer_store_with_one_line(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    _newer(path)
    proc = galapagos("runs", "--store", str(path))
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        f"error: run store {path} has schema v{SCHEMA_VERSION + 1}, newer than this Galapagos "
        f"(v{SCHEMA_VERSION}); upgrade Galapagos or use another --store"
    ]
    assert proc.stdout == ""


def test_a_reader_of_an_older_store_says_how_to_upgrade_it(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    at_version(path, 3)
    with pytest.raises(StoreError, match=r"schema v3, this Galapagos reads v8; open it once"):
        SQLiteReader(path)
    assert version_of(path) == 3  # a reader never writes


def test_a_file_that_is_not_a_store_is_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite"
    path.write_text("not a database, just text\n" * 100)
    with pytest.raises(StoreError, match=r"run store .*notes.sqlite: file is not a database"):
        SQLiteStore(path)
