"""Conformance of the benchmark tables (``BenchmarkStore``, read by ``BenchmarkReader``): a
matrix and its cells, the runs that fill them, and one process per benchmark."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from harness.core.errors import StoreError
from harness.store import BenchmarkCell, SQLiteStore
from harness.store.owner import owner_token
from tests.store.conftest import run_record

Reader = Callable[[], Any]
MATRIX = {"scaffolds": ["topk", "evox"], "tasks": ["t"], "seeds": [0], "iterations": 3}


def _cells(name: str) -> list[BenchmarkCell]:
    return [BenchmarkCell(name, s, "t", 0, i) for i, s in enumerate(MATRIX["scaffolds"])]


def test_a_benchmark_reads_back_with_its_cells_in_order(
    file_store: SQLiteStore, reader_of: Reader
) -> None:
    bench = file_store.benchmarks
    bench.create_benchmark("week1", MATRIX, list(reversed(_cells("week1"))))
    bench.create_benchmark("week2", {**MATRIX, "iterations": 9}, _cells("week2"))
    read = reader_of().benchmarks
    assert read.benchmark("week1") == MATRIX
    assert read.benchmark("nope") is None
    assert [(n, m["iterations"]) for n, m, _ in read.benchmarks()] == [("week2", 9), ("week1", 3)]
    assert read.benchmark_cells("week1") == _cells("week1")  # by position, not insertion
    assert read.benchmark_run_ids() == set()


def test_a_benchmark_name_is_stored_once(file_store: SQLiteStore) -> None:
    file_store.benchmarks.create_benchmark("b", MATRIX, _cells("b"))
    with pytest.raises(StoreError, match="benchmark 'b' already exists"):
        file_store.benchmarks.create_benchmark("b", {}, [])
    assert file_store.benchmarks.benchmark("b") == MATRIX


def test_cells_record_their_runs_or_why_none_started(
    file_store: SQLiteStore, reader_of: Reader
) -> None:
    bench = file_store.benchmarks
    bench.create_benchmark("b", MATRIX, _cells("b"))
    bench.create_benchmark("c", MATRIX, _cells("c"))
    file_store.create_run(run_record("run-1"))
    bench.set_cell("b", "topk", "t", 0, run_id="run-1")
    bench.set_cell("c", "topk", "t", 0, run_id="run-1")
    bench.set_cell("b", "evox", "t", 0, run_id=None, error="engine away")
    read = reader_of().benchmarks
    cells = read.benchmark_cells("b")
    assert [(c.scaffold, c.run_id, c.error) for c in cells] == [
        ("topk", "run-1", ""),
        ("evox", None, "engine away"),
    ]
    assert read.benchmark_run_ids() == {"run-1"}
    assert sorted(read.run_benchmarks("run-1")) == ["b", "c"]
    assert read.run_benchmarks("other") == []


def test_one_live_process_runs_a_benchmark(file_store: SQLiteStore) -> None:
    bench = file_store.benchmarks
    bench.create_benchmark("b", MATRIX, _cells("b"))
    me = owner_token()
    assert bench.claim_benchmark("b", me) == ""
    assert bench.claim_benchmark("b", me) == ""  # its own claim again
    other = owner_token(1)  # pid 1 lives: a live other process
    assert bench.claim_benchmark("b", other) == me
    bench.release_benchmark("b", other)  # not its claim: nothing changes
    assert bench.claim_benchmark("b", other) == me
    bench.release_benchmark("b", me)
    assert bench.claim_benchmark("b", other) == ""
    assert bench.claim_benchmark("b", me) == other
    dead = f"{me.split(':')[0]}:999999:1"
    file_store.benchmarks.release_benchmark("b", other)
    assert bench.claim_benchmark("b", dead) == ""
    assert bench.claim_benchmark("b", me) == ""  # a dead holder's claim is taken over
    with pytest.raises(StoreError, match="no benchmark 'nope'"):
        bench.claim_benchmark("nope", me)
