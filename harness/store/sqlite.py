"""SQLite run store (WAL): runs, programs, evaluations, LLM calls, events, checkpoints.

One transaction per iteration: a crash loses at most the iteration in flight.  The schema is
versioned; ``MIGRATIONS[i]`` upgrades version ``i`` to ``i + 1`` and runs on open.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from harness.core.errors import RunNotFound, StoreError
from harness.core.records import Event, Program
from harness.store.base import IterationCommit, RunRecord
from harness.store.owner import owner_alive, run_alive

__all__ = [
    "SCHEMA_VERSION",
    "BenchmarkCell",
    "CommitListener",
    "SQLiteStore",
    "StoredEvent",
    "default_store_path",
]

MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE runs (
        id TEXT PRIMARY KEY, scaffold TEXT NOT NULL, task TEXT NOT NULL, task_path TEXT,
        task_hash TEXT, config TEXT NOT NULL, seed INTEGER NOT NULL, max_iterations INTEGER,
        status TEXT NOT NULL, created_at REAL, updated_at REAL, iterations_done INTEGER DEFAULT 0,
        best_program_id TEXT, seed_score REAL, best_score REAL, prompt_tokens INTEGER DEFAULT 0,
        completion_tokens INTEGER DEFAULT 0, cost REAL DEFAULT 0, error TEXT DEFAULT '',
        owner TEXT DEFAULT ''
    );
    CREATE TABLE programs (
        run_id TEXT NOT NULL, id TEXT NOT NULL, iteration INTEGER NOT NULL, parent_id TEXT,
        code TEXT NOT NULL, metrics TEXT NOT NULL, score REAL, generation INTEGER,
        changes TEXT, artifacts TEXT, metadata TEXT, inspiration_ids TEXT, parent_label TEXT,
        language TEXT, created_at REAL, PRIMARY KEY (run_id, id)
    );
    CREATE INDEX programs_by_iteration ON programs (run_id, iteration);
    CREATE TABLE evaluations (
        run_id TEXT NOT NULL, iteration INTEGER NOT NULL, attempt INTEGER NOT NULL,
        program_id TEXT NOT NULL, status TEXT NOT NULL, result TEXT NOT NULL, code TEXT,
        duration_s REAL, created_at REAL
    );
    CREATE INDEX evaluations_by_run ON evaluations (run_id, iteration);
    CREATE TABLE llm_calls (
        run_id TEXT NOT NULL, iteration INTEGER NOT NULL, attempt INTEGER, purpose TEXT,
        model TEXT, prompt_tokens INTEGER, completion_tokens INTEGER, latency_s REAL, cost REAL,
        ok INTEGER, error TEXT, prompt TEXT, response TEXT, created_at REAL
    );
    CREATE INDEX llm_calls_by_run ON llm_calls (run_id, iteration);
    CREATE TABLE events (
        run_id TEXT NOT NULL, seq INTEGER NOT NULL, iteration INTEGER, kind TEXT NOT NULL,
        payload TEXT NOT NULL, created_at REAL, PRIMARY KEY (run_id, seq)
    );
    CREATE TABLE iterations (
        run_id TEXT NOT NULL, iteration INTEGER NOT NULL, status TEXT NOT NULL,
        best_score REAL, duration_s REAL, created_at REAL, PRIMARY KEY (run_id, iteration)
    );
    CREATE TABLE checkpoints (
        run_id TEXT PRIMARY KEY, iteration INTEGER NOT NULL, state TEXT NOT NULL,
        created_at REAL
    );
    """,
    # v2: benchmarks (``galapagos bench``): a named matrix, and per cell the run that fills it
    # (the run itself is an ordinary stored run) or why no run could start.
    """
    CREATE TABLE benchmarks (
        name TEXT PRIMARY KEY, matrix TEXT NOT NULL, created_at REAL, updated_at REAL
    );
    CREATE TABLE benchmark_cells (
        benchmark TEXT NOT NULL REFERENCES benchmarks (name), scaffold TEXT NOT NULL,
        task TEXT NOT NULL, seed INTEGER NOT NULL, position INTEGER NOT NULL, run_id TEXT,
        error TEXT DEFAULT '', updated_at REAL, PRIMARY KEY (benchmark, scaffold, task, seed)
    );
    CREATE INDEX benchmark_cells_by_run ON benchmark_cells (run_id);
    """,
    # v3: the process running a benchmark (two at once would start the same cells twice).
    """
    ALTER TABLE benchmarks ADD COLUMN owner TEXT DEFAULT '';
    """,
    # v4: why a run stopped, as data; and its owner's heartbeat, so a run owned by a process on
    # another host is known alive (or not) without seeing that process.
    """
    ALTER TABLE runs ADD COLUMN stop_reason TEXT DEFAULT '';
    ALTER TABLE runs ADD COLUMN heartbeat_at REAL;
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)

_RUN_FIELDS = (
    "scaffold task task_path task_hash config seed max_iterations status created_at updated_at "
    "iterations_done best_program_id seed_score best_score prompt_tokens completion_tokens cost "
    "error owner stop_reason heartbeat_at"
).split()


@dataclass(frozen=True)
class StoredEvent:
    """An event as stored: with its sequence number within the run and its time."""

    seq: int
    iteration: int | None
    kind: str
    payload: Mapping[str, Any]
    created_at: float | None


@dataclass(frozen=True)
class BenchmarkCell:
    """One scaffold × task × seed cell of a benchmark: its run (``None`` until one was
    created), or why none could start."""

    benchmark: str
    scaffold: str
    task: str
    seed: int
    position: int
    run_id: str | None = None
    error: str = ""


def default_store_path() -> Path:
    """``$GALAPAGOS_STORE``, else ``$XDG_DATA_HOME/galapagos/store.sqlite``."""
    env = os.environ.get("GALAPAGOS_STORE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "galapagos" / "store.sqlite"


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), default=_json_default)


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    raise TypeError(f"not JSON-serialisable: {type(value).__name__}")


#: Called after a write is committed: ``(run_id, what)`` with ``what`` one of ``"run"`` (created
#: or updated) and ``"iteration"`` (an iteration committed).  Runs in the writer's thread.
CommitListener = Callable[[str, str], None]


class SQLiteStore:
    """Thread-safe (one connection, one lock); readers in other processes see WAL snapshots.

    ``read_only=True`` opens an existing store for reading only (``mode=ro``; no migration, no
    write): a service gives each reader thread its own such connection, so readers never wait
    for the writer's lock and never block it (WAL).
    """

    def __init__(self, path: str | os.PathLike[str], *, read_only: bool = False) -> None:
        self.path = Path(path)
        self.read_only = read_only
        self._listeners: list[CommitListener] = []
        try:
            if read_only:
                uri = f"file:{quote(str(self.path.resolve()))}?mode=ro"
                self._conn = sqlite3.connect(
                    uri, uri=True, check_same_thread=False, isolation_level=None, timeout=30
                )
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._conn = sqlite3.connect(
                    self.path, check_same_thread=False, isolation_level=None, timeout=30
                )
            self._conn.row_factory = sqlite3.Row
            if not read_only:
                self._conn.execute("PRAGMA journal_mode=WAL")
                self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute("PRAGMA foreign_keys=ON")
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open run store {self.path}: {exc}") from exc
        self._lock = threading.RLock()
        #: run id → the owner this connection writes for (see :meth:`fence`).
        self._fences: dict[str, str] = {}
        if read_only:
            self._check_version()
        else:
            self._migrate()

    def add_listener(self, listener: CommitListener) -> None:
        """Call ``listener(run_id, what)`` after every committed write of this connection."""
        self._listeners.append(listener)

    def _notify(self, run_id: str, what: str) -> None:
        for listener in self._listeners:
            listener(run_id, what)

    def _check_version(self) -> None:
        rows = self._query("SELECT value FROM meta WHERE key='schema_version'")
        version = int(rows[0][0]) if rows else 0
        if version != SCHEMA_VERSION:
            raise StoreError(
                f"run store {self.path} has schema v{version}, this Galapagos reads "
                f"v{SCHEMA_VERSION}; open it once for writing (galapagos runs) to upgrade it"
            )

    # -- plumbing ---------------------------------------------------------------------------
    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                yield self._conn
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise

    def _query(self, sql: str, args: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            try:
                return self._conn.execute(sql, args).fetchall()
            except sqlite3.Error as exc:
                raise StoreError(f"run store {self.path}: {exc}") from exc

    def _migrate(self) -> None:
        with self._tx() as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            version = int(row[0]) if row else 0
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"run store {self.path} has schema v{version}, newer than this Galapagos "
                    f"(v{SCHEMA_VERSION}); upgrade Galapagos or use another --store"
                )
            for script in MIGRATIONS[version:]:
                for statement in script.split(";"):
                    if statement.strip():
                        conn.execute(statement)
            conn.execute(
                "INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
            )

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    # -- runs -------------------------------------------------------------------------------
    def create_run(self, run: RunRecord) -> None:
        now = time.time()
        values = [getattr(run, f) for f in _RUN_FIELDS]
        values[_RUN_FIELDS.index("config")] = _dumps(dict(run.config))
        values[_RUN_FIELDS.index("created_at")] = run.created_at or now
        values[_RUN_FIELDS.index("updated_at")] = now
        cols = ", ".join(["id", *_RUN_FIELDS])
        marks = ", ".join("?" * (len(_RUN_FIELDS) + 1))
        try:
            with self._tx() as conn:
                conn.execute(f"INSERT INTO runs ({cols}) VALUES ({marks})", [run.id, *values])
        except sqlite3.IntegrityError as exc:
            raise StoreError(f"run {run.id} already exists in {self.path}") from exc
        self._notify(run.id, "run")

    def _row_to_run(self, row: sqlite3.Row) -> RunRecord:
        data = {k: row[k] for k in row.keys()}  # noqa: SIM118 - sqlite3.Row
        data["config"] = json.loads(data["config"])
        for key in ("task_path", "task_hash", "error", "owner", "stop_reason"):
            data[key] = data[key] or ""
        return RunRecord(**data)

    def get_run(self, run_id: str) -> RunRecord:
        rows = self._query("SELECT * FROM runs WHERE id = ?", (run_id,))
        if not rows:
            rows = self._query("SELECT * FROM runs WHERE id LIKE ?", (run_id + "%",))
            if len(rows) > 1:
                ids = sorted(row["id"] for row in rows)
                shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
                raise RunNotFound(
                    f"{run_id!r} matches {len(ids)} runs in {self.path} ({shown}); "
                    "give more of the id"
                )
            if not rows:
                raise RunNotFound(
                    f"no run {run_id!r} in {self.path}; list runs with `galapagos runs`"
                )
        return self._row_to_run(rows[0])

    def list_runs(self, limit: int | None = None) -> list[RunRecord]:
        sql = "SELECT * FROM runs ORDER BY created_at DESC"
        if limit:
            sql += f" LIMIT {int(limit)}"
        return [self._row_to_run(r) for r in self._query(sql)]

    def update_run(self, run_id: str, **fields: Any) -> None:
        unknown = set(fields) - set(_RUN_FIELDS)
        if unknown:
            raise StoreError(f"unknown run fields {sorted(unknown)}")
        fields["updated_at"] = time.time()
        if "config" in fields:
            fields["config"] = _dumps(fields["config"])
        sets = ", ".join(f"{k} = ?" for k in fields)
        with self._tx() as conn:
            self._check_fence(conn, run_id)
            conn.execute(f"UPDATE runs SET {sets} WHERE id = ?", [*fields.values(), run_id])
        self._notify(run_id, "run")

    def claim_run(self, run_id: str, owner: str) -> str:
        """Make ``owner`` the process running ``run_id`` (status ``running``, a fresh
        heartbeat), atomically; returns the live owner holding it instead ('' when claimed).
        Two processes resuming one run, on one host or two, never both win."""
        with self._tx() as conn:
            row = conn.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
            if row is None:
                raise RunNotFound(f"no run {run_id!r} in {self.path}")
            run = self._row_to_run(row)
            if run.status == "running" and run.owner != owner and run_alive(run):
                return run.owner
            now = time.time()
            conn.execute(
                "UPDATE runs SET status = 'running', owner = ?, heartbeat_at = ?, error = '', "
                "stop_reason = '', updated_at = ? WHERE id = ?",
                (owner, now, now, run_id),
            )
        self._notify(run_id, "run")
        return ""

    def fence(self, run_id: str, owner: str | None) -> None:
        """From now on this connection writes run ``run_id`` only while ``owner`` holds it
        (``None`` lifts the fence): an owner that lost its run to another process (it stopped
        beating, the other claimed it) fails its next write instead of overwriting the run."""
        if owner is None:
            self._fences.pop(run_id, None)
        else:
            self._fences[run_id] = owner

    def _check_fence(self, conn: sqlite3.Connection, run_id: str) -> None:
        owner = self._fences.get(run_id)
        if owner is None:
            return
        row = conn.execute("SELECT owner FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is not None and row[0] != owner:
            raise StoreError(
                f"run {run_id} was taken over by another process ({row[0]}) after this one "
                "stopped beating; this process stops without writing to it"
            )

    def beat(self, run_id: str, owner: str) -> bool:
        """The owner's heartbeat; False when ``owner`` no longer holds the run (another process
        took it over after this one stopped beating)."""
        with self._tx() as conn:
            done = conn.execute(
                "UPDATE runs SET heartbeat_at = ? WHERE id = ? AND owner = ?",
                (time.time(), run_id, owner),
            )
            return done.rowcount == 1

    # -- iterations -------------------------------------------------------------------------
    def commit_iteration(self, commit: IterationCommit) -> None:
        now = time.time()
        run_id = commit.run_id
        try:
            with self._tx() as conn:
                self._check_fence(conn, run_id)
                conn.executemany(
                    "INSERT INTO programs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        (
                            run_id,
                            p.id,
                            p.iteration,
                            p.parent_id,
                            p.code,
                            _dumps(dict(p.metrics)),
                            p.score,
                            p.generation,
                            p.changes,
                            _dumps(dict(p.artifacts)),
                            _dumps(dict(p.metadata)),
                            _dumps(list(p.inspiration_ids)),
                            p.parent_label,
                            p.language,
                            now,
                        )
                        for p in commit.programs
                    ],
                )
                conn.executemany(
                    "INSERT INTO evaluations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        (
                            run_id,
                            e.iteration,
                            e.attempt,
                            e.program_id,
                            e.result.status,
                            _dumps(e.result.to_dict()),
                            e.code,
                            e.result.duration_s,
                            now,
                        )
                        for e in commit.evaluations
                    ],
                )
                conn.executemany(
                    "INSERT INTO llm_calls VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        (
                            run_id,
                            c.iteration,
                            c.attempt,
                            c.call.purpose,
                            c.call.model,
                            c.call.prompt_tokens,
                            c.call.completion_tokens,
                            c.call.latency_s,
                            c.call.cost,
                            int(c.call.ok),
                            c.call.error,
                            c.prompt,
                            c.call.text,
                            now,
                        )
                        for c in commit.llm_calls
                    ],
                )
                row = conn.execute(
                    "SELECT COALESCE(MAX(seq), -1) FROM events WHERE run_id = ?", (run_id,)
                ).fetchone()
                seq = int(row[0]) + 1
                conn.executemany(
                    "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?)",
                    [
                        (run_id, seq + i, ev.iteration, ev.kind, _dumps(dict(ev.payload)), now)
                        for i, ev in enumerate(commit.events)
                    ],
                )
                conn.execute(
                    "INSERT OR REPLACE INTO iterations VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        run_id,
                        commit.iteration,
                        commit.status,
                        commit.best_score,
                        commit.duration_s,
                        now,
                    ),
                )
                if commit.checkpoint is not None:
                    conn.execute(
                        "INSERT OR REPLACE INTO checkpoints VALUES (?, ?, ?, ?)",
                        (run_id, commit.iteration, _dumps(dict(commit.checkpoint)), now),
                    )
                if commit.run_updates:
                    updates = dict(commit.run_updates, updated_at=now)
                    if "config" in updates:
                        updates["config"] = _dumps(updates["config"])
                    sets = ", ".join(f"{k} = ?" for k in updates)
                    conn.execute(
                        f"UPDATE runs SET {sets} WHERE id = ?", [*updates.values(), run_id]
                    )
        except sqlite3.IntegrityError as exc:
            ids = ", ".join(p.id for p in commit.programs)
            raise StoreError(
                f"run store {self.path}: iteration {commit.iteration} of run {run_id} would "
                f"overwrite a stored program (ids {ids}): {exc}"
            ) from exc
        except sqlite3.Error as exc:
            raise StoreError(f"run store {self.path}: cannot commit iteration: {exc}") from exc
        self._notify(run_id, "iteration")

    def programs(self, run_id: str) -> list[Program]:
        rows = self._query(
            "SELECT * FROM programs WHERE run_id = ? ORDER BY iteration, rowid", (run_id,)
        )
        return self._rows_to_programs(rows)

    def program_count(self, run_id: str) -> int:
        rows = self._query("SELECT COUNT(*) FROM programs WHERE run_id = ?", (run_id,))
        return int(rows[0][0])

    def program(self, run_id: str, program_id: str) -> Program | None:
        """One stored program (``None``: the run has no such program)."""
        rows = self._query(
            "SELECT * FROM programs WHERE run_id = ? AND id = ?", (run_id, program_id)
        )
        found = self._rows_to_programs(rows)
        return found[0] if found else None

    def children(self, run_id: str, program_id: str) -> list[Program]:
        rows = self._query(
            "SELECT * FROM programs WHERE run_id = ? AND parent_id = ? ORDER BY iteration, rowid",
            (run_id, program_id),
        )
        return self._rows_to_programs(rows)

    def program_evaluations(self, run_id: str, program_id: str) -> list[dict[str, Any]]:
        """The evaluation results stored for one program (cascade stages, limits hit)."""
        rows = self._query(
            "SELECT iteration, attempt, program_id, status, result, duration_s FROM evaluations "
            "WHERE run_id = ? AND program_id = ? ORDER BY rowid",
            (run_id, program_id),
        )
        return [dict(r) | {"result": json.loads(r["result"])} for r in rows]

    def _rows_to_programs(self, rows: Sequence[sqlite3.Row]) -> list[Program]:
        return [
            Program(
                id=r["id"],
                code=r["code"],
                iteration=r["iteration"],
                metrics=json.loads(r["metrics"]),
                score=r["score"] if r["score"] is not None else float("-inf"),
                parent_id=r["parent_id"],
                inspiration_ids=tuple(json.loads(r["inspiration_ids"] or "[]")),
                parent_label=r["parent_label"] or "",
                generation=r["generation"] or 0,
                language=r["language"] or "python",
                changes=r["changes"] or "",
                artifacts=json.loads(r["artifacts"] or "{}"),
                metadata=json.loads(r["metadata"] or "{}"),
            )
            for r in rows
        ]

    def checkpoint(self, run_id: str) -> tuple[int, Mapping[str, Any]] | None:
        rows = self._query("SELECT iteration, state FROM checkpoints WHERE run_id = ?", (run_id,))
        if not rows:
            return None
        return int(rows[0]["iteration"]), json.loads(rows[0]["state"])

    def done_iterations(self, run_id: str) -> set[int]:
        rows = self._query("SELECT iteration FROM iterations WHERE run_id = ?", (run_id,))
        return {int(r[0]) for r in rows}

    def events(self, run_id: str, kinds: Sequence[str] | None = None) -> list[Event]:
        sql = "SELECT iteration, kind, payload FROM events WHERE run_id = ?"
        args: list[Any] = [run_id]
        if kinds:
            sql += f" AND kind IN ({', '.join('?' * len(kinds))})"
            args += list(kinds)
        rows = self._query(sql + " ORDER BY seq", args)
        return [Event(r["iteration"], r["kind"], json.loads(r["payload"])) for r in rows]

    def events_after(
        self, run_id: str, after_seq: int = -1, *, limit: int | None = None
    ) -> list[StoredEvent]:
        """Events with a sequence number above ``after_seq``, in order (a live feed reads on
        from the last ``seq`` it saw)."""
        sql = (
            "SELECT seq, iteration, kind, payload, created_at FROM events "
            "WHERE run_id = ? AND seq > ? ORDER BY seq"
        )
        args: list[Any] = [run_id, after_seq]
        if limit is not None:
            sql += " LIMIT ?"
            args.append(int(limit))
        return [
            StoredEvent(
                seq=int(r["seq"]),
                iteration=r["iteration"],
                kind=r["kind"],
                payload=json.loads(r["payload"]),
                created_at=r["created_at"],
            )
            for r in self._query(sql, args)
        ]

    def last_seq(self, run_id: str) -> int:
        """The newest event's sequence number (-1: none yet)."""
        rows = self._query("SELECT COALESCE(MAX(seq), -1) FROM events WHERE run_id = ?", (run_id,))
        return int(rows[0][0])

    def evaluations(self, run_id: str) -> list[dict[str, Any]]:
        rows = self._query(
            "SELECT iteration, attempt, program_id, status, result FROM evaluations "
            "WHERE run_id = ? ORDER BY rowid",
            (run_id,),
        )
        return [dict(r) | {"result": json.loads(r["result"])} for r in rows]

    def score_history(self, run_id: str) -> list[tuple[int, float | None]]:
        rows = self._query(
            "SELECT iteration, best_score FROM iterations WHERE run_id = ? ORDER BY iteration",
            (run_id,),
        )
        return [(int(r[0]), r[1]) for r in rows]

    def llm_calls(self, run_id: str) -> list[dict[str, Any]]:
        rows = self._query(
            "SELECT iteration, attempt, purpose, model, prompt_tokens, completion_tokens, "
            "latency_s, cost, ok, error FROM llm_calls WHERE run_id = ? ORDER BY rowid",
            (run_id,),
        )
        return [dict(r) for r in rows]

    def llm_exchanges(self, run_id: str, iteration: int | None = None) -> list[dict[str, Any]]:
        """LLM calls with their prompt and response text (all, or one iteration's)."""
        sql = (
            "SELECT iteration, attempt, purpose, model, prompt_tokens, completion_tokens, "
            "latency_s, cost, ok, error, prompt, response FROM llm_calls WHERE run_id = ?"
        )
        args: list[Any] = [run_id]
        if iteration is not None:
            sql += " AND iteration = ?"
            args.append(iteration)
        return [dict(r) for r in self._query(sql + " ORDER BY rowid", args)]

    def llm_usage(self, run_id: str) -> dict[str, Any]:
        """Calls, tokens, cost and latency in all, by model and by purpose (propose, strategy,
        guide, …: solution calls apart from meta and guide calls)."""
        columns = (
            "COUNT(*) AS calls, SUM(ok) AS ok, SUM(prompt_tokens) AS prompt_tokens, "
            "SUM(completion_tokens) AS completion_tokens, SUM(cost) AS cost, "
            "AVG(latency_s) AS mean_latency_s"
        )
        models = [
            dict(r)
            for r in self._query(
                f"SELECT model, {columns} FROM llm_calls WHERE run_id = ? GROUP BY model",
                (run_id,),
            )
        ]
        purposes = [
            dict(r)
            for r in self._query(
                f"SELECT purpose, {columns} FROM llm_calls WHERE run_id = ? GROUP BY purpose",
                (run_id,),
            )
        ]
        return {
            "calls": sum(m["calls"] for m in models),
            "prompt_tokens": sum(m["prompt_tokens"] or 0 for m in models),
            "completion_tokens": sum(m["completion_tokens"] or 0 for m in models),
            "cost": sum(m["cost"] or 0.0 for m in models),
            "by_model": models,
            "by_purpose": purposes,
        }

    def best_by_task(self) -> dict[str, tuple[float, dict[str, Any]]]:
        """For each task, the best score any stored run reached and that program's metrics."""
        rows = self._query(
            "SELECT r.task, p.score, p.metrics FROM runs r JOIN programs p "
            "ON p.run_id = r.id AND p.id = r.best_program_id WHERE r.best_score IS NOT NULL "
            "ORDER BY p.score DESC"
        )
        best: dict[str, tuple[float, dict[str, Any]]] = {}
        for r in rows:
            best.setdefault(r["task"], (r["score"], json.loads(r["metrics"])))
        return best

    # -- benchmarks -------------------------------------------------------------------------
    def benchmark(self, name: str) -> dict[str, Any] | None:
        """The stored matrix of benchmark ``name`` (None: no such benchmark)."""
        rows = self._query("SELECT matrix FROM benchmarks WHERE name = ?", (name,))
        return json.loads(rows[0]["matrix"]) if rows else None

    def benchmarks(self) -> list[tuple[str, dict[str, Any], float]]:
        """Every benchmark: (name, matrix, created_at), newest first."""
        rows = self._query(
            "SELECT name, matrix, created_at FROM benchmarks ORDER BY created_at DESC, name"
        )
        return [(r["name"], json.loads(r["matrix"]), r["created_at"] or 0.0) for r in rows]

    def create_benchmark(
        self, name: str, matrix: Mapping[str, Any], cells: Sequence[BenchmarkCell]
    ) -> None:
        """Store a new benchmark and its (empty) cells in one transaction."""
        now = time.time()
        try:
            with self._tx() as conn:
                conn.execute(
                    "INSERT INTO benchmarks (name, matrix, created_at, updated_at) "
                    "VALUES (?, ?, ?, ?)",
                    (name, _dumps(dict(matrix)), now, now),
                )
                conn.executemany(
                    "INSERT INTO benchmark_cells VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        (name, c.scaffold, c.task, c.seed, c.position, c.run_id, c.error, now)
                        for c in cells
                    ],
                )
        except sqlite3.IntegrityError as exc:
            raise StoreError(f"benchmark {name!r} already exists in {self.path}") from exc

    def claim_benchmark(self, name: str, owner: str) -> str:
        """Make ``owner`` the process running benchmark ``name``; returns the live owner that
        holds it instead ('' when the claim succeeded)."""
        with self._tx() as conn:
            row = conn.execute("SELECT owner FROM benchmarks WHERE name = ?", (name,)).fetchone()
            if row is None:
                raise StoreError(f"no benchmark {name!r} in {self.path}")
            holder = row[0] or ""
            if holder and holder != owner and owner_alive(holder):
                return str(holder)
            conn.execute("UPDATE benchmarks SET owner = ? WHERE name = ?", (owner, name))
        return ""

    def release_benchmark(self, name: str, owner: str) -> None:
        with self._tx() as conn:
            conn.execute(
                "UPDATE benchmarks SET owner = '' WHERE name = ? AND owner = ?", (name, owner)
            )

    def set_cell(
        self, name: str, scaffold: str, task: str, seed: int, *, run_id: str | None, error: str = ""
    ) -> None:
        """Record the run that fills a cell (or why none could start)."""
        now = time.time()
        with self._tx() as conn:
            conn.execute(
                "UPDATE benchmark_cells SET run_id = ?, error = ?, updated_at = ? "
                "WHERE benchmark = ? AND scaffold = ? AND task = ? AND seed = ?",
                (run_id, error, now, name, scaffold, task, seed),
            )
            conn.execute("UPDATE benchmarks SET updated_at = ? WHERE name = ?", (now, name))

    def benchmark_cells(self, name: str) -> list[BenchmarkCell]:
        rows = self._query(
            "SELECT * FROM benchmark_cells WHERE benchmark = ? ORDER BY position", (name,)
        )
        return [
            BenchmarkCell(
                benchmark=r["benchmark"],
                scaffold=r["scaffold"],
                task=r["task"],
                seed=int(r["seed"]),
                position=int(r["position"]),
                run_id=r["run_id"],
                error=r["error"] or "",
            )
            for r in rows
        ]

    def benchmark_run_ids(self) -> set[str]:
        """Every run that fills a cell of some benchmark."""
        rows = self._query("SELECT run_id FROM benchmark_cells WHERE run_id IS NOT NULL")
        return {r[0] for r in rows}

    def run_benchmarks(self, run_id: str) -> list[str]:
        """The benchmarks a run fills a cell of."""
        rows = self._query("SELECT benchmark FROM benchmark_cells WHERE run_id = ?", (run_id,))
        return [r[0] for r in rows]

    def evaluation_count(self, run_id: str) -> int:
        rows = self._query("SELECT COUNT(*) FROM evaluations WHERE run_id = ?", (run_id,))
        return int(rows[0][0])
