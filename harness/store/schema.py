"""The store file's schema: one ordered list of migrations for every table in the file.

A store file holds the runs (written by the controller), the benchmarks (``galapagos bench``)
and the hub's tokens, sessions and queue (``galapagos serve``, ``galapagos token``): one file to
back up, one version number (``meta.schema_version``).  ``MIGRATIONS[i]`` takes a file from
version ``i`` to ``i + 1``; opening a store for writing applies the missing ones in one
transaction, in order.

Every step is idempotent (``CREATE … IF NOT EXISTS``, :class:`AddColumn` only when the column is
missing): the hub's tables were versioned apart (``service_meta``) until v6, so a file may
already hold some of what v5 and v6 create — whatever order its store and hub were upgraded
in, it ends with the same schema (tests/store/test_schema.py builds every path).

A file newer than this Galapagos is refused with one line, before anything is written.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from harness.core.errors import StoreError

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "AddColumn", "Migration", "check_version", "migrate"]


@dataclass(frozen=True)
class AddColumn:
    """``ALTER TABLE table ADD COLUMN column decl``, skipped when the column exists."""

    table: str
    column: str
    decl: str


Step = str | AddColumn


@dataclass(frozen=True)
class Migration:
    """One schema version: what it is for, and its idempotent steps."""

    version: int
    summary: str
    steps: tuple[Step, ...]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "runs: programs, evaluations, LLM calls, events, iterations, checkpoints",
        (
            """CREATE TABLE IF NOT EXISTS runs (
                id TEXT PRIMARY KEY, scaffold TEXT NOT NULL, task TEXT NOT NULL,
                task_path TEXT, task_hash TEXT, config TEXT NOT NULL, seed INTEGER NOT NULL,
                max_iterations INTEGER, status TEXT NOT NULL, created_at REAL, updated_at REAL,
                iterations_done INTEGER DEFAULT 0, best_program_id TEXT, seed_score REAL,
                best_score REAL, prompt_tokens INTEGER DEFAULT 0,
                completion_tokens INTEGER DEFAULT 0, cost REAL DEFAULT 0, error TEXT DEFAULT '',
                owner TEXT DEFAULT ''
            )""",
            """CREATE TABLE IF NOT EXISTS programs (
                run_id TEXT NOT NULL, id TEXT NOT NULL, iteration INTEGER NOT NULL,
                parent_id TEXT, code TEXT NOT NULL, metrics TEXT NOT NULL, score REAL,
                generation INTEGER, changes TEXT, artifacts TEXT, metadata TEXT,
                inspiration_ids TEXT, parent_label TEXT, language TEXT, created_at REAL,
                PRIMARY KEY (run_id, id)
            )""",
            "CREATE INDEX IF NOT EXISTS programs_by_iteration ON programs (run_id, iteration)",
            """CREATE TABLE IF NOT EXISTS evaluations (
                run_id TEXT NOT NULL, iteration INTEGER NOT NULL, attempt INTEGER NOT NULL,
                program_id TEXT NOT NULL, status TEXT NOT NULL, result TEXT NOT NULL, code TEXT,
                duration_s REAL, created_at REAL
            )""",
            "CREATE INDEX IF NOT EXISTS evaluations_by_run ON evaluations (run_id, iteration)",
            """CREATE TABLE IF NOT EXISTS llm_calls (
                run_id TEXT NOT NULL, iteration INTEGER NOT NULL, attempt INTEGER, purpose TEXT,
                model TEXT, prompt_tokens INTEGER, completion_tokens INTEGER, latency_s REAL,
                cost REAL, ok INTEGER, error TEXT, prompt TEXT, response TEXT, created_at REAL
            )""",
            "CREATE INDEX IF NOT EXISTS llm_calls_by_run ON llm_calls (run_id, iteration)",
            """CREATE TABLE IF NOT EXISTS events (
                run_id TEXT NOT NULL, seq INTEGER NOT NULL, iteration INTEGER,
                kind TEXT NOT NULL, payload TEXT NOT NULL, created_at REAL,
                PRIMARY KEY (run_id, seq)
            )""",
            """CREATE TABLE IF NOT EXISTS iterations (
                run_id TEXT NOT NULL, iteration INTEGER NOT NULL, status TEXT NOT NULL,
                best_score REAL, duration_s REAL, created_at REAL,
                PRIMARY KEY (run_id, iteration)
            )""",
            """CREATE TABLE IF NOT EXISTS checkpoints (
                run_id TEXT PRIMARY KEY, iteration INTEGER NOT NULL, state TEXT NOT NULL,
                created_at REAL
            )""",
        ),
    ),
    Migration(
        2,
        "benchmarks: a named matrix, and per cell the run that fills it or why none started",
        (
            """CREATE TABLE IF NOT EXISTS benchmarks (
                name TEXT PRIMARY KEY, matrix TEXT NOT NULL, created_at REAL, updated_at REAL
            )""",
            """CREATE TABLE IF NOT EXISTS benchmark_cells (
                benchmark TEXT NOT NULL REFERENCES benchmarks (name), scaffold TEXT NOT NULL,
                task TEXT NOT NULL, seed INTEGER NOT NULL, position INTEGER NOT NULL,
                run_id TEXT, error TEXT DEFAULT '', updated_at REAL,
                PRIMARY KEY (benchmark, scaffold, task, seed)
            )""",
            "CREATE INDEX IF NOT EXISTS benchmark_cells_by_run ON benchmark_cells (run_id)",
        ),
    ),
    Migration(
        3,
        "the process running a benchmark (two at once would start the same cells twice)",
        (AddColumn("benchmarks", "owner", "TEXT DEFAULT ''"),),
    ),
    Migration(
        4,
        "why a run stopped, as data; its owner's heartbeat (an owner on another host)",
        (
            AddColumn("runs", "stop_reason", "TEXT DEFAULT ''"),
            AddColumn("runs", "heartbeat_at", "REAL"),
        ),
    ),
    Migration(
        5,
        "the hub: API tokens (hashed) and the run queue (until now versioned apart)",
        (
            """CREATE TABLE IF NOT EXISTS service_tokens (
                id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, digest TEXT NOT NULL,
                created_at REAL NOT NULL, last_used_at REAL, revoked_at REAL
            )""",
            """CREATE TABLE IF NOT EXISTS service_queue (
                run_id TEXT PRIMARY KEY, state TEXT NOT NULL, options TEXT NOT NULL,
                enqueued_at REAL NOT NULL, started_at REAL, finished_at REAL,
                error TEXT DEFAULT ''
            )""",
        ),
    ),
    Migration(
        6,
        "the hub: token scopes and expiry (older tokens: admin), who queued a run, login "
        "sessions; its own version key goes",
        (
            AddColumn("service_tokens", "scope", "TEXT NOT NULL DEFAULT 'admin'"),
            AddColumn("service_tokens", "expires_at", "REAL"),
            AddColumn("service_queue", "token_id", "TEXT DEFAULT ''"),
            "CREATE INDEX IF NOT EXISTS service_queue_by_token ON service_queue (token_id, state)",
            """CREATE TABLE IF NOT EXISTS service_sessions (
                digest TEXT PRIMARY KEY, token_id TEXT NOT NULL, created_at REAL NOT NULL,
                last_seen_at REAL NOT NULL, expires_at REAL NOT NULL, revoked_at REAL
            )""",
            "DROP TABLE IF EXISTS service_meta",
        ),
    ),
    Migration(
        7,
        "checkpoint deltas: a run's checkpoint is its base state plus the changes since, so an "
        "iteration writes what changed, not the whole population",
        (
            """CREATE TABLE IF NOT EXISTS checkpoint_deltas (
                run_id TEXT NOT NULL, seq INTEGER NOT NULL, iteration INTEGER NOT NULL,
                delta TEXT NOT NULL, created_at REAL, PRIMARY KEY (run_id, seq)
            )""",
        ),
    ),
    Migration(
        8,
        "checkpoint deltas as flat lists of operations (a path and a change each) instead of "
        "nested nodes, cheaper to build and write; deltas written before still read, and an "
        "older Galapagos, which cannot read the new ones, refuses the file",
        (),
    ),
)
SCHEMA_VERSION = len(MIGRATIONS)


def stored_version(conn: sqlite3.Connection) -> int:
    """The file's schema version (0: a new file)."""
    has_meta = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
    ).fetchone()
    if not has_meta:
        return 0
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    return int(row[0]) if row else 0


def _newer(path: Path, version: int) -> StoreError:
    return StoreError(
        f"run store {path} has schema v{version}, newer than this Galapagos (v{SCHEMA_VERSION}); "
        "upgrade Galapagos or use another --store"
    )


def apply(conn: sqlite3.Connection, step: Step) -> None:
    """Run one migration step (an :class:`AddColumn` only if its column is missing)."""
    if isinstance(step, AddColumn):
        columns = {row[1] for row in conn.execute(f"PRAGMA table_info({step.table})")}
        if step.column not in columns:
            conn.execute(f"ALTER TABLE {step.table} ADD COLUMN {step.column} {step.decl}")
    else:
        conn.execute(step)


def migrate(conn: sqlite3.Connection, path: Path) -> int:
    """Bring the file to :data:`SCHEMA_VERSION` inside the caller's write transaction; returns
    the version it had.  Raises :class:`StoreError` for a file newer than this code."""
    version = stored_version(conn)
    if version > SCHEMA_VERSION:
        raise _newer(path, version)
    if version == SCHEMA_VERSION:
        return version
    conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
    for migration in MIGRATIONS[version:]:
        for step in migration.steps:
            apply(conn, step)
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
    return version


def check_version(conn: sqlite3.Connection, path: Path) -> None:
    """For a reader (it never migrates): the file must be at :data:`SCHEMA_VERSION`."""
    version = stored_version(conn)
    if version > SCHEMA_VERSION:
        raise _newer(path, version)
    if version < SCHEMA_VERSION:
        raise StoreError(
            f"run store {path} has schema v{version}, this Galapagos reads v{SCHEMA_VERSION}; "
            "open it once for writing (galapagos runs) to upgrade it"
        )
