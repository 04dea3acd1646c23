"""Conformance of the controller's writer (``harness.core.store.RunStore``): every
implementation stores a run and its iterations exactly, atomically, and reads them back as a
resume needs them."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest

from harness.core.errors import RunNotFound, StoreError
from harness.core.records import Event
from tests.store.conftest import commit, program, run_record


def test_a_run_reads_back_field_for_field(writer: Any) -> None:
    run = run_record(owner="host:1:2", task_hash="abc", heartbeat_at=12.5, stop_reason="")
    writer.create_run(run)
    got = writer.get_run("r1")
    created, updated = got.created_at, got.updated_at
    assert created > 0 and updated >= created
    assert dataclasses.replace(got, created_at=0.0, updated_at=0.0) == run
    assert got.config == {"seed": 3, "llm": {"models": [{"name": "m"}]}}


def test_a_run_id_is_stored_once(writer: Any) -> None:
    writer.create_run(run_record())
    with pytest.raises(StoreError, match="run r1 already exists"):
        writer.create_run(run_record(scaffold="other"))
    assert writer.get_run("r1").scaffold == "topk"


def test_an_unknown_run_is_not_found(writer: Any) -> None:
    with pytest.raises(RunNotFound, match="no run 'nope'"):
        writer.get_run("nope")


def test_update_run_sets_named_fields_and_refuses_others(writer: Any) -> None:
    writer.create_run(run_record())
    writer.update_run("r1", status="failed", error="boom", stop_reason="error", config={"a": 1})
    got = writer.get_run("r1")
    assert (got.status, got.error, got.stop_reason, got.config) == (
        "failed",
        "boom",
        "error",
        {"a": 1},
    )
    with pytest.raises(StoreError, match=r"unknown run fields \['colour'\]"):
        writer.update_run("r1", colour="red")


def test_before_the_first_commit_a_run_has_nothing_to_resume(writer: Any) -> None:
    writer.create_run(run_record())
    assert writer.programs("r1") == []
    assert writer.checkpoint("r1") is None
    assert writer.done_iterations("r1") == set()
    assert writer.events("r1") == []


def test_commits_read_back_as_a_resume_needs_them(writer: Any) -> None:
    writer.create_run(run_record())
    seed = program("p0", 0, 0.5)
    children = [program("p2", 1, 0.7, parent="p0"), program("p1", 1, 0.6, parent="p0")]
    writer.commit_iteration(commit("r1", 0, [seed], kinds=("seed",), best=0.5))
    writer.commit_iteration(
        commit("r1", 1, children, best=0.7, checkpoint={"state": [1, 2]}, iterations_done=1)
    )
    writer.commit_iteration(commit("r1", 2, [], kinds=("iteration_failed",), best=0.7))
    # Programs in iteration order, then in the order the iteration admitted them.
    assert writer.programs("r1") == [seed, *children]
    assert writer.done_iterations("r1") == {0, 1, 2}
    assert writer.checkpoint("r1") == (2, {"iteration": 2})  # the latest only
    assert [(e.iteration, e.kind) for e in writer.events("r1")] == [
        (0, "seed"),
        (1, "select"),
        (1, "admit"),
        (2, "iteration_failed"),
    ]
    assert writer.events("r1", ["admit", "seed"]) == [
        Event(0, "seed", {"i": 0, "kind": "seed"}),
        Event(1, "admit", {"i": 1, "kind": "admit"}),
    ]
    assert writer.get_run("r1").iterations_done == 1  # run_updates applied with the commit


def test_a_program_keeps_every_field_and_a_missing_score(writer: Any) -> None:
    writer.create_run(run_record())
    unscored = dataclasses.replace(program("p0", 0, 0.0), score=float("-inf"))
    writer.commit_iteration(commit("r1", 0, [unscored]))
    (got,) = writer.programs("r1")
    assert got == unscored and math.isinf(got.score)
    assert got.inspiration_ids == () and isinstance(got.metadata, dict)


def test_a_commit_is_all_or_nothing(writer: Any) -> None:
    writer.create_run(run_record())
    writer.commit_iteration(commit("r1", 0, [program("p0", 0, 0.5)], kinds=("seed",)))
    clash = commit("r1", 1, [program("p1", 1, 0.6), program("p0", 1, 0.9)], iterations_done=1)
    with pytest.raises(StoreError, match="would overwrite a stored program"):
        writer.commit_iteration(clash)
    # Nothing of iteration 1 is stored: not its new program, events, checkpoint or updates.
    assert [p.id for p in writer.programs("r1")] == ["p0"]
    assert writer.done_iterations("r1") == {0}
    assert [e.kind for e in writer.events("r1")] == ["seed"]
    assert writer.checkpoint("r1") == (0, {"iteration": 0})
    assert writer.get_run("r1").iterations_done == 0


def test_an_iteration_committed_again_replaces_its_checkpoint_not_its_events(
    writer: Any,
) -> None:
    """A resume reruns a not-done iteration: its second commit is the one that counts."""
    writer.create_run(run_record())
    writer.commit_iteration(commit("r1", 1, [], kinds=("iteration_not_done",)))
    writer.commit_iteration(commit("r1", 1, [program("p1", 1, 0.6)], kinds=("admit",)))
    assert writer.done_iterations("r1") == {1}
    assert [e.kind for e in writer.events("r1")] == ["iteration_not_done", "admit"]
    assert [p.id for p in writer.programs("r1")] == ["p1"]
