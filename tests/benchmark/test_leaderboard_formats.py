"""A leaderboard fit for a paper: every format carries the provenance line (loud for the offline
model), numbers keep one rule for significant digits, float noise is no spread, a failed row is
one dash per cell, and the raw objective stands beside the score."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from harness.benchmark import csv_text, latex, leaderboard, markdown
from harness.benchmark.leaderboard import OFFLINE_NOTE
from harness.benchmark.render import cells
from harness.benchmark.stats import sig, spread
from harness.core.store import IterationCommit, RunRecord
from harness.store.sqlite import SQLiteStore
from tests.benchmark.test_leaderboard import _store
from tests.cli.helpers import galapagos


def _table(tmp_path: Path) -> dict:
    return leaderboard(_store(tmp_path), "bm")


def test_every_text_format_starts_with_the_provenance_line(tmp_path: Path) -> None:
    table = _table(tmp_path)
    source = table["provenance"]
    assert source["offline"] and source["seeds"] == 2 and source["iterations"] == 3
    assert source["line"].startswith(f"benchmark bm: {OFFLINE_NOTE}; 2 seeds × 3 iterations")
    assert "95% bootstrap CI of the mean over seeds" in source["line"]
    md = markdown(table)
    assert md.splitlines()[0] == "> " + source["line"].replace(OFFLINE_NOTE, f"**{OFFLINE_NOTE}**")
    assert "| task | scaffold | rank | best | mean ± std | 95% CI | n | metric |" in md
    tex = latex(table)
    assert "\\caption{benchmark bm: offline model --- NOT a method result" in tex
    assert "\\toprule" in tex and "circle\\_packing" in tex and "$\\pm$" in tex
    rows = list(csv.DictReader(io.StringIO(csv_text(table))))
    assert len(rows) == 4 and {r["note"] for r in rows} == {OFFLINE_NOTE}
    assert {r["model"] for r in rows} == {"offline model"} and rows[0]["iterations"] == "3"


def test_numbers_keep_one_rule_and_noise_is_no_spread(tmp_path: Path) -> None:
    assert [sig(1.0), sig(0.9105927528), sig(0.0365299), sig(2.63598)] == [
        "1.000", "0.9106", "0.03653", "2.636"
    ]  # fmt: skip
    assert spread(1.3e-12, 0.9106) == "0" and spread(0.0292, 0.448) == "0.029"
    table = _table(tmp_path)
    a = next(r for r in table["rows"] if (r["scaffold"], r["task"]) == ("a", "circle_packing"))
    assert cells(a)[3:6] == ["0.9000", "0.8000 ± 0.14", "[0.7000, 0.9000]"]
    lone = next(
        r for r in table["rows"] if (r["scaffold"], r["task"]) == ("b", "function_minimization")
    )
    assert cells(lone)[4] == "0.2000"  # one seed: a mean, no invented spread


def test_a_row_without_a_scored_run_is_one_dash_per_cell(tmp_path: Path) -> None:
    store = _store(tmp_path)
    for seed in (0, 1):  # both of b × circle_packing failed
        store.update_run(f"b-circle_packing-{seed}", status="failed", error="seed broken")
    row = next(
        r for r in leaderboard(store, "bm")["rows"]
        if (r["scaffold"], r["task"]) == ("b", "circle_packing")
    )  # fmt: skip
    shown = cells(row)
    assert shown[2:6] == ["-", "-", "-", "-"] and "- ± -" not in shown
    assert row["failed_runs"] == 2


def test_the_raw_objective_stands_beside_the_score(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.sqlite")
    from harness.core.records import Program
    from harness.store import BenchmarkCell

    store.benchmarks.create_benchmark(
        "raw", {"scaffolds": ["a"], "tasks": ["function_minimization"], "seeds": [0, 1],
                "iterations": 0},
        [BenchmarkCell("raw", "a", "function_minimization", s, s) for s in (0, 1)],
    )  # fmt: skip
    for seed, value in ((0, -1.2), (1, -1.5)):
        run_id = f"r{seed}"
        store.create_run(
            RunRecord(run_id, "a", "function_minimization", "", {}, seed, 0, status="completed",
                      best_score=0.9, best_program_id="p0")
        )  # fmt: skip
        program = Program(id="p0", code="x = 1\n", iteration=0, score=0.9,
                          metrics={"combined_score": 0.9, "value": value})  # fmt: skip
        store.commit_iteration(IterationCommit(run_id, 0, "ok", programs=[program], best_score=0.9))
        store.benchmarks.set_cell("raw", "a", "function_minimization", seed, run_id=run_id)
    row = leaderboard(store, "raw")["rows"][0]
    # function_minimization minimises ``value``: the best raw value is the smallest.
    assert (row["raw_metric"], row["direction"]) == ("value", "minimize")
    assert row["best_raw"] == -1.5 and row["mean_raw"] == -1.35
    assert cells(row)[7:10] == ["value ↓", "-1.500", "-1.350"]


def test_the_command_prints_each_format_and_the_figures_carry_the_line(tmp_path: Path) -> None:
    table = _table(tmp_path)
    store = tmp_path / "s.sqlite"
    for fmt, render in (("markdown", markdown), ("latex", latex), ("csv", csv_text)):
        proc = galapagos("leaderboard", "--bench", "bm", "--format", fmt, store=store)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == render(table)
    proc = galapagos("leaderboard", "--bench", "bm", "--format", "json", store=store)
    assert json.loads(proc.stdout)["provenance"]["line"] == table["provenance"]["line"]
    proc = galapagos("leaderboard", "--bench", "bm", "--plots", str(tmp_path / "p"), store=store)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == table["provenance"]["line"]
    for name in ("curves_circle_packing.svg", "heatmap.svg"):
        svg = (tmp_path / "p" / name).read_text()
        assert "OFFLINE MODEL — NOT A METHOD RESULT" in svg and "benchmark bm:" in svg
    assert "#1=" in (tmp_path / "p" / "heatmap.svg").read_text()  # a tie says so


def test_a_cell_run_on_another_model_is_named_never_pooled_silently(tmp_path: Path) -> None:
    store = _store(tmp_path)
    online = {"llm": {"provider": "openai", "api_base": "https://api.openai.com/v1",
                      "models": [{"name": "gpt-4.1-mini"}]}}  # fmt: skip
    store.update_run("a-circle_packing-1", config=online)  # e.g. resumed on another endpoint
    source = leaderboard(store, "bm")["provenance"]
    assert source["model"] == "MIXED MODELS (gpt-4.1-mini @ api.openai.com; offline model)"
    assert source["line"].startswith("benchmark bm: model MIXED MODELS (")
