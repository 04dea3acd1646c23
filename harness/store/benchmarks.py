"""The benchmark tables (``galapagos bench``): a named matrix, and per scaffold × task × seed
cell the ordinary stored run that fills it, or why none could start.

One process runs a benchmark at a time (:meth:`SQLiteBenchmarks.claim_benchmark`): two would
start the same cells twice.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Mapping, Sequence
from typing import Any

from harness.core.errors import StoreError
from harness.store._sql import Connection, dumps
from harness.store.owner import owner_alive
from harness.store.protocols import BenchmarkCell

__all__ = ["SQLiteBenchmarks"]


class SQLiteBenchmarks:
    """:class:`~harness.store.protocols.BenchmarkStore` over a store file's connection (the
    store's ``.benchmarks``; on a read-only connection only the reads work)."""

    def __init__(self, db: Connection) -> None:
        self._db = db

    def benchmark(self, name: str) -> dict[str, Any] | None:
        """The stored matrix of benchmark ``name`` (None: no such benchmark)."""
        rows = self._db.query("SELECT matrix FROM benchmarks WHERE name = ?", (name,))
        return json.loads(rows[0]["matrix"]) if rows else None

    def benchmarks(self) -> list[tuple[str, dict[str, Any], float]]:
        """Every benchmark: (name, matrix, created_at), newest first."""
        rows = self._db.query(
            "SELECT name, matrix, created_at FROM benchmarks ORDER BY created_at DESC, name"
        )
        return [(r["name"], json.loads(r["matrix"]), r["created_at"] or 0.0) for r in rows]

    def benchmark_cells(self, name: str) -> list[BenchmarkCell]:
        """The cells of benchmark ``name``, in the matrix's order."""
        rows = self._db.query(
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
        rows = self._db.query("SELECT run_id FROM benchmark_cells WHERE run_id IS NOT NULL")
        return {r[0] for r in rows}

    def run_benchmarks(self, run_id: str) -> list[str]:
        """The benchmarks a run fills a cell of."""
        rows = self._db.query("SELECT benchmark FROM benchmark_cells WHERE run_id = ?", (run_id,))
        return [r[0] for r in rows]

    # -- writes -----------------------------------------------------------------------------
    def create_benchmark(
        self, name: str, matrix: Mapping[str, Any], cells: Sequence[BenchmarkCell]
    ) -> None:
        """Store a new benchmark and its (empty) cells in one transaction."""
        now = time.time()
        try:
            with self._db.tx() as conn:
                conn.execute(
                    "INSERT INTO benchmarks (name, matrix, created_at, updated_at) "
                    "VALUES (?, ?, ?, ?)",
                    (name, dumps(dict(matrix)), now, now),
                )
                conn.executemany(
                    "INSERT INTO benchmark_cells VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        (name, c.scaffold, c.task, c.seed, c.position, c.run_id, c.error, now)
                        for c in cells
                    ],
                )
        except sqlite3.IntegrityError as exc:
            raise StoreError(f"benchmark {name!r} already exists in {self._db.path}") from exc

    def claim_benchmark(self, name: str, owner: str) -> str:
        """Make ``owner`` the process running benchmark ``name``; returns the live owner that
        holds it instead ('' when the claim succeeded)."""
        with self._db.tx() as conn:
            row = conn.execute("SELECT owner FROM benchmarks WHERE name = ?", (name,)).fetchone()
            if row is None:
                raise StoreError(f"no benchmark {name!r} in {self._db.path}")
            holder = row[0] or ""
            if holder and holder != owner and owner_alive(holder):
                return str(holder)
            conn.execute("UPDATE benchmarks SET owner = ? WHERE name = ?", (owner, name))
        return ""

    def release_benchmark(self, name: str, owner: str) -> None:
        """``owner`` no longer runs benchmark ``name`` (a no-op if another owner holds it)."""
        with self._db.tx() as conn:
            conn.execute(
                "UPDATE benchmarks SET owner = '' WHERE name = ? AND owner = ?", (name, owner)
            )

    def set_cell(
        self, name: str, scaffold: str, task: str, seed: int, *, run_id: str | None, error: str = ""
    ) -> None:
        """Record the run that fills a cell (or why none could start)."""
        now = time.time()
        with self._db.tx() as conn:
            conn.execute(
                "UPDATE benchmark_cells SET run_id = ?, error = ?, updated_at = ? "
                "WHERE benchmark = ? AND scaffold = ? AND task = ? AND seed = ?",
                (run_id, error, now, name, scaffold, task, seed),
            )
            conn.execute("UPDATE benchmarks SET updated_at = ? WHERE name = ?", (now, name))
