"""Conformance of the read side (``RunReader``): the writer's own reads and a read-only
``SQLiteReader`` of the same file answer every query the same way."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from harness.core.errors import RunNotFound
from harness.store import SQLiteStore
from tests.store.conftest import commit, program, run_record

Reader = Callable[[], Any]


def _two_runs(store: SQLiteStore) -> None:
    store.create_run(run_record("20260101-a1", created_at=100.0))
    store.create_run(run_record("20260101-a2", task="packing", created_at=200.0))
    store.commit_iteration(commit("20260101-a1", 0, [program("p0", 0, 0.5)], kinds=("seed",)))
    store.commit_iteration(
        commit(
            "20260101-a1",
            1,
            [program("p1", 1, 0.8, parent="p0"), program("p2", 1, 0.6, parent="p0")],
            model="big",
            best=0.8,
        )
    )
    store.commit_iteration(
        commit("20260101-a1", 2, [program("p3", 2, 0.7, parent="p1")], purpose="guide", best=0.8)
    )
    store.update_run("20260101-a1", best_program_id="p1", best_score=0.8)


def test_runs_are_found_by_id_or_unique_prefix(file_store: SQLiteStore, reader_of: Reader) -> None:
    _two_runs(file_store)
    reader = reader_of()
    assert reader.get_run("20260101-a2").task == "packing"
    assert reader.get_run("20260101-a1").id == "20260101-a1"
    with pytest.raises(RunNotFound, match=r"'20260101-a' matches 2 runs .*give more of the id"):
        reader.get_run("20260101-a")
    with pytest.raises(RunNotFound, match="list runs with `galapagos runs`"):
        reader.get_run("x")
    assert [r.id for r in reader.list_runs()] == ["20260101-a2", "20260101-a1"]  # newest first
    assert [r.id for r in reader.list_runs(limit=1)] == ["20260101-a2"]


def test_programs_and_lineage(file_store: SQLiteStore, reader_of: Reader) -> None:
    _two_runs(file_store)
    reader = reader_of()
    run = "20260101-a1"
    assert [p.id for p in reader.programs(run)] == ["p0", "p1", "p2", "p3"]
    assert reader.program_count(run) == 4
    assert reader.program(run, "p1") == program("p1", 1, 0.8, parent="p0")
    assert reader.program(run, "nope") is None
    assert [p.id for p in reader.children(run, "p0")] == ["p1", "p2"]
    assert reader.children(run, "p3") == []


def test_events_read_on_from_a_sequence_number(file_store: SQLiteStore, reader_of: Reader) -> None:
    _two_runs(file_store)
    reader = reader_of()
    run = "20260101-a1"
    feed = reader.events_after(run)
    assert [(e.seq, e.iteration, e.kind) for e in feed] == [
        (0, 0, "seed"),
        (1, 1, "select"),
        (2, 1, "admit"),
        (3, 2, "select"),
        (4, 2, "admit"),
    ]
    assert all(e.created_at for e in feed)
    assert [e.seq for e in reader.events_after(run, 2, limit=1)] == [3]
    assert reader.last_seq(run) == 4
    assert [e.kind for e in reader.events(run, ["seed"])] == ["seed"]


def test_evaluations_and_scores(file_store: SQLiteStore, reader_of: Reader) -> None:
    _two_runs(file_store)
    reader = reader_of()
    run = "20260101-a1"
    rows = reader.evaluations(run)
    assert [(r["iteration"], r["program_id"], r["status"]) for r in rows] == [
        (0, "p0", "ok"),
        (1, "p1", "ok"),
        (1, "p2", "ok"),
        (2, "p3", "ok"),
    ]
    assert rows[1]["result"]["metrics"] == {"combined_score": 0.8, "valid": 1}
    assert reader.evaluation_count(run) == 4
    (one,) = reader.program_evaluations(run, "p2")
    assert (one["iteration"], one["duration_s"], one["result"]["stages"]) == (1, 0.5, [{"s": 1}])
    assert reader.score_history(run) == [(0, None), (1, 0.8), (2, 0.8)]
    assert reader.best_by_task() == {"circle_packing": (0.8, {"combined_score": 0.8, "valid": 1})}


def test_llm_calls_with_and_without_their_text(file_store: SQLiteStore, reader_of: Reader) -> None:
    _two_runs(file_store)
    reader = reader_of()
    run = "20260101-a1"
    calls = reader.llm_calls(run)
    assert [(c["iteration"], c["model"], c["purpose"]) for c in calls] == [
        (0, "m", "propose"),
        (1, "big", "propose"),
        (2, "m", "guide"),
    ]
    assert "prompt" not in calls[0] and "response" not in calls[0]
    (second,) = reader.llm_exchanges(run, iteration=1)
    assert (second["prompt"], second["response"]) == ("prompt 1", "answer 1")
    assert len(reader.llm_exchanges(run)) == 3
    usage = reader.llm_usage(run)
    assert (usage["calls"], usage["prompt_tokens"], usage["completion_tokens"]) == (3, 30, 15)
    assert usage["cost"] == pytest.approx(0.003)
    assert {m["model"]: m["calls"] for m in usage["by_model"]} == {"m": 2, "big": 1}
    assert {p["purpose"]: p["calls"] for p in usage["by_purpose"]} == {"propose": 2, "guide": 1}


def test_an_unknown_run_reads_as_empty(file_store: SQLiteStore, reader_of: Reader) -> None:
    reader = reader_of()
    assert reader.programs("nope") == [] and reader.program_count("nope") == 0
    assert reader.events("nope") == [] and reader.events_after("nope") == []
    assert reader.last_seq("nope") == -1
    assert reader.evaluations("nope") == [] and reader.evaluation_count("nope") == 0
    assert reader.score_history("nope") == [] and reader.llm_calls("nope") == []
    assert reader.llm_usage("nope")["calls"] == 0
    assert reader.best_by_task() == {}


def test_a_reader_sees_each_commit_once_it_is_committed(
    file_store: SQLiteStore, reader_of: Reader
) -> None:
    file_store.create_run(run_record())
    reader = reader_of()
    assert reader.programs("r1") == []
    file_store.commit_iteration(commit("r1", 0, [program("p0", 0, 0.5)]))
    assert [p.id for p in reader.programs("r1")] == ["p0"] and reader.last_seq("r1") == 1
