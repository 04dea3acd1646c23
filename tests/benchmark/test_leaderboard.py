"""The leaderboard's statistics, read from a store holding hand-made runs (no sandbox)."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

from harness.benchmark import best_so_far, leaderboard, resolve_benchmark, write_csv
from harness.core.errors import ConfigError
from harness.core.store import IterationCommit, RunRecord
from harness.store import BenchmarkCell, SQLiteStore

#: (scaffold, task, seed) → best score after each iteration 0..3 (None: the iteration failed)
HISTORIES = {
    ("a", "circle_packing", 0): [0.5, 0.6, None, 0.9],
    ("a", "circle_packing", 1): [0.5, 0.7, 0.7, 0.7],
    ("b", "circle_packing", 0): [0.5, 0.5, 0.95, 0.95],
    ("b", "circle_packing", 1): [0.5, 0.8, 0.8, 0.8],
    ("a", "function_minimization", 0): [0.2, 0.3, 0.4, 0.5],
    ("a", "function_minimization", 1): [0.2, 0.3, 0.3, 0.3],
    ("b", "function_minimization", 0): [0.2, 0.2, 0.2, 0.2],
}


def _store(tmp_path: Path) -> SQLiteStore:
    store = SQLiteStore(tmp_path / "s.sqlite")
    cells = [
        BenchmarkCell("bm", s, t, seed, i)
        for i, (s, t, seed) in enumerate(
            [(s, t, seed) for s in "ab" for t in ("circle_packing", "function_minimization")
             for seed in (0, 1)]
        )
    ]  # fmt: skip
    matrix = {"scaffolds": ["a", "b"], "tasks": ["circle_packing", "function_minimization"],
              "seeds": [0, 1], "iterations": 3}  # fmt: skip
    store.benchmarks.create_benchmark("bm", matrix, cells)
    for (scaffold, task, seed), history in HISTORIES.items():
        run_id = f"{scaffold}-{task}-{seed}"
        store.create_run(
            RunRecord(run_id, scaffold, task, "", {}, seed, 3, status="completed",
                      best_score=max(v for v in history if v is not None), seed_score=history[0],
                      prompt_tokens=10, completion_tokens=5, cost=0.5)
        )  # fmt: skip
        for iteration, best in enumerate(history):
            store.commit_iteration(
                IterationCommit(run_id, iteration, "ok" if best is not None else "failed",
                                best_score=best)
            )  # fmt: skip
        store.benchmarks.set_cell("bm", scaffold, task, seed, run_id=run_id)
    # b × function_minimization × seed 1 could not start: recorded with its reason
    store.benchmarks.set_cell(
        "bm", "b", "function_minimization", 1, run_id=None, error="engine away"
    )
    return store


def _row(table: dict, scaffold: str, task: str) -> dict:
    return next(r for r in table["rows"] if r["scaffold"] == scaffold and r["task"] == task)


def test_rows_give_best_mean_std_gap_and_rank_over_seeds(tmp_path: Path) -> None:
    table = leaderboard(_store(tmp_path), "bm")
    a, b = _row(table, "a", "circle_packing"), _row(table, "b", "circle_packing")
    assert (a["best"], b["best"]) == (0.9, 0.95)
    assert a["mean"] == pytest.approx(0.8) and b["mean"] == pytest.approx(0.875)
    assert a["std"] == pytest.approx(math.sqrt(0.02)) and b["std"] == pytest.approx(
        math.sqrt(2 * 0.075**2)
    )
    known = a["best_known"]
    assert known == pytest.approx(1.000373087)  # circle_packing's card, on the score scale
    assert a["gap"] == pytest.approx((known - 0.8) / known)
    # Two seeds each, 0.9/0.7 against 0.95/0.8: the 95% bootstrap intervals of the means
    # ([0.7, 0.9] and [0.8, 0.95]) overlap, so neither is ranked above the other.
    assert (a["ci_low"], a["ci_high"]) == (0.7, 0.9) and (b["ci_low"], b["ci_high"]) == (0.8, 0.95)
    assert (b["rank"], a["rank"]) == (1, 1)
    fm_a, fm_b = (
        _row(table, "a", "function_minimization"),
        _row(table, "b", "function_minimization"),
    )
    # a: 0.5 and 0.3, wholly above b's single run (0.2): a is first, b second.
    assert (fm_a["rank"], fm_b["rank"]) == (1, 2)
    assert fm_b["seeds"] == 1 and fm_b["failed_runs"] == 1 and fm_b["std"] == 0.0
    assert (fm_b["ci_low"], fm_b["ci_high"]) == (0.2, 0.2)
    ranks = {s["scaffold"]: s["mean_rank"] for s in table["scaffolds"]}
    assert ranks == {"a": 1.0, "b": 1.5}


def test_iterations_to_99_and_sums(tmp_path: Path) -> None:
    table = leaderboard(_store(tmp_path), "bm")
    a = _row(table, "a", "circle_packing")
    assert a["iterations_to_99"] == pytest.approx((3 + 1) / 2)  # seed 0 at 3, seed 1 at 1
    assert a["tokens"] == 30 and a["cost"] == pytest.approx(1.0)
    cells = table["cells"]
    assert len(cells) == 8
    missing = next(c for c in cells if c["run_id"] is None)
    assert (missing["status"], missing["error"]) == ("failed", "engine away")
    assert table["status"] == {"completed": 7, "failed": 1}


def test_overlapping_intervals_tie_and_disjoint_ones_rank(tmp_path: Path) -> None:
    from harness.benchmark.stats import rank_by_intervals

    rows = [
        {"task": "t", "ci_low": 0.4, "ci_high": 0.6},
        {"task": "t", "ci_low": 0.5, "ci_high": 0.7},  # overlaps the first: a tie
        {"task": "t", "ci_low": 0.1, "ci_high": 0.3},  # wholly below both
        {"task": "t", "ci_low": 0.6 + 1e-13, "ci_high": 0.8},  # above the first by noise only
        {"task": "u", "ci_low": 0.0, "ci_high": 0.0},
    ]
    rank_by_intervals(rows)
    assert [r["rank"] for r in rows] == [1, 1, 4, 1, 1]


def test_best_so_far_carries_over_failed_iterations() -> None:
    assert best_so_far([(0, 0.5), (1, None), (2, 0.4), (3, 0.7)], 4) == [0.5, 0.5, 0.5, 0.7, 0.7]
    assert best_so_far([], 2) == [None, None, None]
    # The runs' own margin: a later value that differs in its last digits is no improvement.
    assert best_so_far([(0, 0.5), (1, 0.5 + 2.3e-16), (2, 0.6)], 2) == [0.5, 0.5, 0.6]


def test_csv_has_one_line_per_row(tmp_path: Path) -> None:
    table = leaderboard(_store(tmp_path), "bm")
    write_csv(table, tmp_path / "out" / "t.csv")
    with (tmp_path / "out" / "t.csv").open() as fh:
        lines = list(csv.DictReader(fh))
    assert len(lines) == 4
    assert float(lines[0]["mean"]) == pytest.approx(table["rows"][0]["mean"])


def test_unknown_benchmark_is_one_line(tmp_path: Path) -> None:
    store = _store(tmp_path)
    assert resolve_benchmark(store, None) == "bm"
    with pytest.raises(ConfigError, match="no benchmark 'nope'.*benchmarks: bm"):
        resolve_benchmark(store, "nope")
