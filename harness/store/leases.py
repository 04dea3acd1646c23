"""Who runs a run (:class:`~harness.store.protocols.RunLeases`): an atomic claim, the owner's
heartbeat, and a write fence, over a store file's connection.

Which owner is alive is :mod:`harness.store.owner`'s rule (this boot's process exists; another
host's owner beat recently).  The fence is this connection's: the writer checks it inside each
write transaction of a fenced run (:meth:`SQLiteLeases.check`), so an owner that lost its run
fails its next write instead of overwriting the new owner's.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable

from harness.core.errors import RunNotFound, StoreError
from harness.store._sql import Connection
from harness.store.owner import run_alive
from harness.store.reader import row_to_run

__all__ = ["SQLiteLeases"]


class SQLiteLeases:
    """The leases of the runs in one store file, for one connection (its fences)."""

    def __init__(self, db: Connection, on_fence: Callable[[str], None] | None = None) -> None:
        self._db = db
        #: run id → the owner this connection writes for (see :meth:`fence`).
        self._fences: dict[str, str] = {}
        #: Told the run id whenever a run is fenced or its fence lifted (an owner starts or
        #: stops writing it).
        self._on_fence = on_fence

    def claim_run(self, run_id: str, owner: str) -> str:
        """Make ``owner`` the process running ``run_id`` (status ``running``, a fresh
        heartbeat), atomically; returns the live owner holding it instead ('' when claimed).
        Two processes resuming one run, on one host or two, never both win."""
        with self._db.tx() as conn:
            row = conn.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
            if row is None:
                raise RunNotFound(f"no run {run_id!r} in {self._db.path}")
            run = row_to_run(row)
            if run.status == "running" and run.owner != owner and run_alive(run):
                return run.owner
            now = time.time()
            conn.execute(
                "UPDATE runs SET status = 'running', owner = ?, heartbeat_at = ?, error = '', "
                "stop_reason = '', updated_at = ? WHERE id = ?",
                (owner, now, now, run_id),
            )
        self._db.notify(run_id, "run")
        return ""

    def beat(self, run_id: str, owner: str) -> bool:
        """The owner's heartbeat; False when ``owner`` no longer holds the run (another process
        took it over after this one stopped beating)."""
        with self._db.tx() as conn:
            done = conn.execute(
                "UPDATE runs SET heartbeat_at = ? WHERE id = ? AND owner = ?",
                (time.time(), run_id, owner),
            )
            return done.rowcount == 1

    def fence(self, run_id: str, owner: str | None) -> None:
        """From now on this connection writes run ``run_id`` only while ``owner`` holds it
        (``None`` lifts the fence): an owner that lost its run to another process (it stopped
        beating, the other claimed it) fails its next write instead of overwriting the run."""
        if owner is None:
            self._fences.pop(run_id, None)
        else:
            self._fences[run_id] = owner
        if self._on_fence is not None:
            self._on_fence(run_id)

    def check(self, conn: sqlite3.Connection, run_id: str) -> None:
        """Inside a write transaction: refuse a write to a fenced run another owner holds."""
        owner = self._fences.get(run_id)
        if owner is None:
            return
        row = conn.execute("SELECT owner FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is not None and row[0] != owner:
            raise StoreError(
                f"run {run_id} was taken over by another process ({row[0]}) after this one "
                "stopped beating; this process stops without writing to it"
            )
