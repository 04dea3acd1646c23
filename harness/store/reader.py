"""The read side of a store file (:class:`~harness.store.protocols.StoreReader`): runs,
programs, evaluations, events, LLM calls, and the benchmarks as ``.benchmarks``.

:class:`SQLiteReader` opens a file read-only (``mode=ro``: never migrates, never writes); a
service gives its request threads a few such connections, so readers never wait for the
writer's lock and never block it (WAL).  :class:`~harness.store.sqlite.SQLiteStore`, the
writer, reads the same way.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.core.errors import RunNotFound
from harness.core.records import Event, Program
from harness.core.store import RunRecord
from harness.store import _delta
from harness.store._sql import Connection
from harness.store.benchmarks import SQLiteBenchmarks
from harness.store.protocols import BenchmarkReader, StoredEvent

__all__ = ["SQLiteReader"]


def row_to_run(row: sqlite3.Row) -> RunRecord:
    data = {k: row[k] for k in row.keys()}  # noqa: SIM118 - sqlite3.Row
    data["config"] = json.loads(data["config"])
    for key in ("task_path", "task_hash", "error", "owner", "stop_reason"):
        data[key] = data[key] or ""
    return RunRecord(**data)


def _rows_to_programs(rows: Sequence[sqlite3.Row]) -> list[Program]:
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


class SQLiteReader:
    """A store file, read (see the module docstring); ``SQLiteReader(path)`` opens it
    read-only and needs the file to exist at the current schema version."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._open(Connection(path, read_only=True))

    def _open(self, db: Connection) -> None:
        self._db = db
        #: The store file.
        self.path: Path = db.path
        #: The benchmark tables of this file (read here; :class:`SQLiteStore`'s write too).
        self.benchmarks: BenchmarkReader = SQLiteBenchmarks(db)

    def close(self) -> None:
        self._db.close()

    # -- runs -------------------------------------------------------------------------------
    def get_run(self, run_id: str) -> RunRecord:
        query = self._db.query
        rows = query("SELECT * FROM runs WHERE id = ?", (run_id,))
        if not rows:
            rows = query("SELECT * FROM runs WHERE id LIKE ?", (run_id + "%",))
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
        return row_to_run(rows[0])

    def list_runs(self, limit: int | None = None) -> list[RunRecord]:
        sql = "SELECT * FROM runs ORDER BY created_at DESC"
        if limit:
            sql += f" LIMIT {int(limit)}"
        return [row_to_run(r) for r in self._db.query(sql)]

    def best_by_task(self) -> dict[str, tuple[float, dict[str, Any]]]:
        """For each task, the best score any stored run reached and that program's metrics."""
        rows = self._db.query(
            "SELECT r.task, p.score, p.metrics FROM runs r JOIN programs p "
            "ON p.run_id = r.id AND p.id = r.best_program_id WHERE r.best_score IS NOT NULL "
            "ORDER BY p.score DESC"
        )
        best: dict[str, tuple[float, dict[str, Any]]] = {}
        for r in rows:
            best.setdefault(r["task"], (r["score"], json.loads(r["metrics"])))
        return best

    # -- programs ---------------------------------------------------------------------------
    def programs(self, run_id: str) -> list[Program]:
        rows = self._db.query(
            "SELECT * FROM programs WHERE run_id = ? ORDER BY iteration, rowid", (run_id,)
        )
        return _rows_to_programs(rows)

    def program_count(self, run_id: str) -> int:
        rows = self._db.query("SELECT COUNT(*) FROM programs WHERE run_id = ?", (run_id,))
        return int(rows[0][0])

    def program(self, run_id: str, program_id: str) -> Program | None:
        """One stored program (``None``: the run has no such program)."""
        rows = self._db.query(
            "SELECT * FROM programs WHERE run_id = ? AND id = ?", (run_id, program_id)
        )
        found = _rows_to_programs(rows)
        return found[0] if found else None

    def children(self, run_id: str, program_id: str) -> list[Program]:
        """The programs whose parent is ``program_id``, in the order they were admitted."""
        rows = self._db.query(
            "SELECT * FROM programs WHERE run_id = ? AND parent_id = ? ORDER BY iteration, rowid",
            (run_id, program_id),
        )
        return _rows_to_programs(rows)

    # -- resume -----------------------------------------------------------------------------
    def checkpoint(self, run_id: str) -> tuple[int, Mapping[str, Any]] | None:
        """The latest checkpoint: (iteration, state), or None before the first commit."""
        rows = self._db.query(
            "SELECT iteration, state FROM checkpoints WHERE run_id = ?", (run_id,)
        )
        if not rows:
            return None
        iteration, state = int(rows[0]["iteration"]), json.loads(rows[0]["state"])
        deltas = self._db.query(
            "SELECT iteration, delta FROM checkpoint_deltas WHERE run_id = ? ORDER BY seq",
            (run_id,),
        )
        for row in deltas:  # the changes since the base (harness.store._delta)
            iteration, state = int(row["iteration"]), _delta.apply(state, json.loads(row["delta"]))
        return iteration, state

    def done_iterations(self, run_id: str) -> set[int]:
        """The iterations committed (a resume skips them)."""
        rows = self._db.query("SELECT iteration FROM iterations WHERE run_id = ?", (run_id,))
        return {int(r[0]) for r in rows}

    def score_history(self, run_id: str) -> list[tuple[int, float | None]]:
        """(iteration, best score after it) for every committed iteration, in order."""
        rows = self._db.query(
            "SELECT iteration, best_score FROM iterations WHERE run_id = ? ORDER BY iteration",
            (run_id,),
        )
        return [(int(r[0]), r[1]) for r in rows]

    # -- events -----------------------------------------------------------------------------
    def events(self, run_id: str, kinds: Sequence[str] | None = None) -> list[Event]:
        """The run's events in order (all, or those of ``kinds``)."""
        sql = "SELECT iteration, kind, payload FROM events WHERE run_id = ?"
        args: list[Any] = [run_id]
        if kinds:
            sql += f" AND kind IN ({', '.join('?' * len(kinds))})"
            args += list(kinds)
        rows = self._db.query(sql + " ORDER BY seq", args)
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
            for r in self._db.query(sql, args)
        ]

    def last_seq(self, run_id: str) -> int:
        """The newest event's sequence number (-1: none yet)."""
        rows = self._db.query(
            "SELECT COALESCE(MAX(seq), -1) FROM events WHERE run_id = ?", (run_id,)
        )
        return int(rows[0][0])

    # -- evaluations ------------------------------------------------------------------------
    def evaluations(self, run_id: str) -> list[dict[str, Any]]:
        """Every evaluation of the run (iteration, attempt, program, status, result)."""
        rows = self._db.query(
            "SELECT iteration, attempt, program_id, status, result FROM evaluations "
            "WHERE run_id = ? ORDER BY rowid",
            (run_id,),
        )
        return [dict(r) | {"result": json.loads(r["result"])} for r in rows]

    def evaluation_count(self, run_id: str) -> int:
        rows = self._db.query("SELECT COUNT(*) FROM evaluations WHERE run_id = ?", (run_id,))
        return int(rows[0][0])

    def program_evaluations(self, run_id: str, program_id: str) -> list[dict[str, Any]]:
        """The evaluation results stored for one program (cascade stages, limits hit)."""
        rows = self._db.query(
            "SELECT iteration, attempt, program_id, status, result, duration_s FROM evaluations "
            "WHERE run_id = ? AND program_id = ? ORDER BY rowid",
            (run_id, program_id),
        )
        return [dict(r) | {"result": json.loads(r["result"])} for r in rows]

    # -- LLM calls --------------------------------------------------------------------------
    def llm_calls(self, run_id: str) -> list[dict[str, Any]]:
        """The run's LLM calls without their text (tokens, cost, latency, outcome)."""
        rows = self._db.query(
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
        return [dict(r) for r in self._db.query(sql + " ORDER BY rowid", args)]

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
            for r in self._db.query(
                f"SELECT model, {columns} FROM llm_calls WHERE run_id = ? GROUP BY model",
                (run_id,),
            )
        ]
        purposes = [
            dict(r)
            for r in self._db.query(
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
