"""The store's additions for readers: read-only connections, events since a sequence number,
commit listeners."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from harness.core.errors import StoreError
from harness.core.records import Event
from harness.core.store import IterationCommit, RunRecord
from harness.store import SQLiteReader, SQLiteStore


def _run(store: SQLiteStore) -> str:
    store.create_run(
        RunRecord(
            id="r1", scaffold="topk", task="t", task_path="", config={}, seed=0, max_iterations=3
        )
    )
    return "r1"


def _commit(store: SQLiteStore, iteration: int, kinds: list[str]) -> None:
    store.commit_iteration(
        IterationCommit(
            run_id="r1",
            iteration=iteration,
            status="ok",
            events=[Event(iteration, k, {"n": i}) for i, k in enumerate(kinds)],
        )
    )


def test_events_after_a_sequence_number(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.sqlite")
    _run(store)
    assert store.last_seq("r1") == -1 and store.events_after("r1") == []
    _commit(store, 0, ["seed"])
    _commit(store, 1, ["select", "attempt", "admit"])
    assert [e.seq for e in store.events_after("r1")] == [0, 1, 2, 3]
    later = store.events_after("r1", 1)
    assert [(e.seq, e.kind, e.iteration) for e in later] == [(2, "attempt", 1), (3, "admit", 1)]
    assert [e.seq for e in store.events_after("r1", 0, limit=2)] == [1, 2]
    assert store.last_seq("r1") == 3


def test_a_read_only_connection_reads_live_and_cannot_write(tmp_path: Path) -> None:
    writer = SQLiteStore(tmp_path / "s.sqlite")
    reader = SQLiteReader(tmp_path / "s.sqlite")
    _run(writer)
    _commit(writer, 0, ["seed"])
    assert reader.get_run("r1").id == "r1" and reader.last_seq("r1") == 0
    _commit(writer, 1, ["admit"])
    assert reader.last_seq("r1") == 1  # sees the writer's new commit
    assert not hasattr(reader, "update_run") and not hasattr(reader, "commit_iteration")
    with pytest.raises((StoreError, sqlite3.OperationalError), match="readonly"):
        reader.benchmarks.create_benchmark("b", {}, [])  # type: ignore[attr-defined]
    with pytest.raises(StoreError, match="cannot open run store"):
        SQLiteReader(tmp_path / "missing.sqlite")
    assert not (tmp_path / "missing.sqlite").exists()


def test_listeners_hear_each_committed_write(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.sqlite")
    heard: list[tuple[str, str]] = []
    store.add_listener(lambda run_id, what: heard.append((run_id, what)))
    _run(store)
    _commit(store, 0, ["seed"])
    store.update_run("r1", status="completed")
    assert heard == [("r1", "run"), ("r1", "iteration"), ("r1", "run")]
