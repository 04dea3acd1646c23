"""The writable store file: the controller's writer (``RunStore``) and the run's leases over
the reads of :class:`~harness.store.reader.SQLiteReader` (WAL).

One transaction per iteration: a crash loses at most the iteration in flight.  Opening a file
for writing creates it if needed and migrates it (:mod:`harness.store.schema`).

Checkpoints are incremental: a run's first commit through this connection writes its whole
state (the *base*), later ones only what changed since the commit before
(:mod:`harness.store._delta`), until the chain of deltas has grown as large as the base, when
the base is written anew and the chain dropped.  Reading a checkpoint applies the chain to the
base, so restoring reads at most twice the state's size.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.core.errors import StoreError
from harness.core.store import IterationCommit, RunRecord
from harness.store import _delta
from harness.store._sql import CommitListener, Connection, dumps
from harness.store.benchmarks import SQLiteBenchmarks
from harness.store.leases import SQLiteLeases
from harness.store.reader import SQLiteReader

__all__ = ["CommitListener", "SQLiteStore", "default_store_path"]

_RUN_FIELDS = (
    "scaffold task task_path task_hash config seed max_iterations status created_at updated_at "
    "iterations_done best_program_id seed_score best_score prompt_tokens completion_tokens cost "
    "error owner stop_reason heartbeat_at"
).split()


def default_store_path() -> Path:
    """``$GALAPAGOS_STORE``, else ``$XDG_DATA_HOME/galapagos/store.sqlite``."""
    env = os.environ.get("GALAPAGOS_STORE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "galapagos" / "store.sqlite"


class SQLiteStore(SQLiteReader):
    """A store file opened for writing (created and migrated as needed).

    It is the controller's writer (:class:`~harness.core.store.RunStore`: ``create_run``,
    ``update_run``, ``commit_iteration`` and the reads a resume needs), reads everything a
    :class:`~harness.store.reader.SQLiteReader` reads, and holds the file's other pieces:
    ``leases`` (:class:`~harness.store.leases.SQLiteLeases`) and ``benchmarks``
    (:class:`~harness.store.benchmarks.SQLiteBenchmarks`).  Thread-safe: one connection, one
    lock; readers in other processes see WAL snapshots.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._open(Connection(path, read_only=False))
        #: Per run: the checkpoint state last committed through this connection (a delta is
        #: taken against it), the size of its base and of the chain of deltas since.
        self._checkpoints: dict[str, _Chain] = {}
        #: Claim, heartbeat and write fence of this file's runs, for this connection.  A run
        #: fenced anew (an owner starts writing it: a resume) starts a new chain with a base:
        #: another connection may have written the run's checkpoints since this one did.
        self.leases = SQLiteLeases(self._db, on_fence=self._drop_chain)
        #: The benchmark tables, read and written.
        self.benchmarks: SQLiteBenchmarks = SQLiteBenchmarks(self._db)

    def _drop_chain(self, run_id: str) -> None:
        self._checkpoints.pop(run_id, None)

    def add_listener(self, listener: CommitListener) -> None:
        """Call ``listener(run_id, what)`` after every committed write of this connection."""
        self._db.listeners.append(listener)

    # -- runs -------------------------------------------------------------------------------
    def create_run(self, run: RunRecord) -> None:
        """Store a new run (its id must be new)."""
        now = time.time()
        values = [getattr(run, f) for f in _RUN_FIELDS]
        values[_RUN_FIELDS.index("config")] = dumps(dict(run.config))
        values[_RUN_FIELDS.index("created_at")] = run.created_at or now
        values[_RUN_FIELDS.index("updated_at")] = now
        cols = ", ".join(["id", *_RUN_FIELDS])
        marks = ", ".join("?" * (len(_RUN_FIELDS) + 1))
        try:
            with self._db.tx() as conn:
                conn.execute(f"INSERT INTO runs ({cols}) VALUES ({marks})", [run.id, *values])
        except sqlite3.IntegrityError as exc:
            raise StoreError(f"run {run.id} already exists in {self.path}") from exc
        self._db.notify(run.id, "run")

    def update_run(self, run_id: str, **fields: Any) -> None:
        """Set run fields (names of :class:`~harness.core.store.RunRecord`, not ``id``)."""
        unknown = set(fields) - set(_RUN_FIELDS)
        if unknown:
            raise StoreError(f"unknown run fields {sorted(unknown)}")
        fields["updated_at"] = time.time()
        if "config" in fields:
            fields["config"] = dumps(fields["config"])
        sets = ", ".join(f"{k} = ?" for k in fields)
        with self._db.tx() as conn:
            self.leases.check(conn, run_id)
            conn.execute(f"UPDATE runs SET {sets} WHERE id = ?", [*fields.values(), run_id])
        self._db.notify(run_id, "run")

    # -- iterations -------------------------------------------------------------------------
    def commit_iteration(self, commit: IterationCommit) -> None:
        """Everything one iteration produced, in one transaction."""
        run_id = commit.run_id
        try:
            with self._db.tx() as conn:
                self.leases.check(conn, run_id)
                now = time.time()
                _write_iteration(conn, commit, now)
                chain = self._write_checkpoint(conn, commit, now)
        except sqlite3.IntegrityError as exc:
            ids = ", ".join(p.id for p in commit.programs)
            raise StoreError(
                f"run store {self.path}: iteration {commit.iteration} of run {run_id} would "
                f"overwrite a stored program (ids {ids}): {exc}"
            ) from exc
        except sqlite3.Error as exc:
            raise StoreError(f"run store {self.path}: cannot commit iteration: {exc}") from exc
        if chain is not None:
            self._checkpoints[run_id] = chain
        self._db.notify(run_id, "iteration")

    def _write_checkpoint(
        self, conn: sqlite3.Connection, commit: IterationCommit, now: float
    ) -> _Chain | None:
        """Write ``commit``'s checkpoint as a delta against the last one, or as a new base;
        the chain as it stands after this commit (``None``: no checkpoint)."""
        state = commit.checkpoint
        if state is None:
            return None
        run_id = commit.run_id
        chain = self._checkpoints.get(run_id)
        if chain is not None:
            node = _delta.diff(chain.state, state)
            text = dumps(node)
            if chain.chain_size + len(text) <= chain.base_size:
                conn.execute(
                    "INSERT INTO checkpoint_deltas VALUES (?, ?, ?, ?, ?)",
                    (run_id, chain.seq + 1, commit.iteration, text, now),
                )
                return _Chain(state, chain.base_size, chain.chain_size + len(text), chain.seq + 1)
        text = dumps(dict(state))
        conn.execute("DELETE FROM checkpoint_deltas WHERE run_id = ?", (run_id,))
        conn.execute(
            "INSERT OR REPLACE INTO checkpoints VALUES (?, ?, ?, ?)",
            (run_id, commit.iteration, text, now),
        )
        return _Chain(state, max(len(text), _MIN_BASE), 0, 0)


#: A base smaller than this is not rewritten before its chain reaches this size.
_MIN_BASE = 4096


@dataclass(frozen=True)
class _Chain:
    #: The state last committed (blocks hand out fresh state dicts: it is never changed).
    state: Mapping[str, Any]
    base_size: int
    chain_size: int
    #: The last delta's number (0: none yet).
    seq: int


def _write_iteration(conn: sqlite3.Connection, commit: IterationCommit, now: float) -> None:
    run_id = commit.run_id
    conn.executemany(
        "INSERT INTO programs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                run_id,
                p.id,
                p.iteration,
                p.parent_id,
                p.code,
                dumps(dict(p.metrics)),
                p.score,
                p.generation,
                p.changes,
                dumps(dict(p.artifacts)),
                dumps(dict(p.metadata)),
                dumps(list(p.inspiration_ids)),
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
                dumps(e.result.to_dict()),
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
            (run_id, seq + i, ev.iteration, ev.kind, dumps(dict(ev.payload)), now)
            for i, ev in enumerate(commit.events)
        ],
    )
    conn.execute(
        "INSERT OR REPLACE INTO iterations VALUES (?, ?, ?, ?, ?, ?)",
        (run_id, commit.iteration, commit.status, commit.best_score, commit.duration_s, now),
    )
    if commit.run_updates:
        updates = dict(commit.run_updates, updated_at=now)
        if "config" in updates:
            updates["config"] = dumps(updates["config"])
        sets = ", ".join(f"{k} = ?" for k in updates)
        conn.execute(f"UPDATE runs SET {sets} WHERE id = ?", [*updates.values(), run_id])
