"""``galapagos bench`` end to end: offline model, real Docker, through the CLI in a subprocess."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from harness.store.sqlite import SQLiteStore
from tests.cli.helpers import ROOT, galapagos

pytestmark = [pytest.mark.docker, pytest.mark.slow]

ARTIFACTS = ROOT / "test-artifacts" / "benchmark"

MATRIX = ["--scaffolds", "topk,best_of_n", "--tasks", "circle_packing,function_minimization",
          "--seeds", "2", "--iterations", "3", "--parallel", "2"]  # fmt: skip


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "GALAPAGOS_"))}


def _completed_cells(store: Path, name: str) -> int:
    if not store.exists():
        return 0
    try:
        with sqlite3.connect(store, timeout=5) as conn:
            row = conn.execute(
                "SELECT COUNT(*) FROM benchmark_cells c JOIN runs r ON r.id = c.run_id "
                "WHERE c.benchmark = ? AND r.status = 'completed'",
                (name,),
            ).fetchone()
    except sqlite3.Error:  # not migrated yet
        return 0
    return int(row[0])


def _leaderboard(store: Path, name: str) -> dict[str, Any]:
    proc = galapagos("leaderboard", "--bench", name, "--json", "--store", str(store))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _without_ids(cells: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in c.items() if k != "run_id"} for c in cells]


def test_an_interrupted_benchmark_resumes_to_the_table_of_its_stored_runs(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    first = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "bench", "--name", "acc", *MATRIX, "--json",
         "--store", str(store)],
        cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and first.poll() is None:
        if _completed_cells(store, "acc") >= 2:
            first.send_signal(signal.SIGINT)
            break
        time.sleep(0.05)
    stdout, stderr = first.communicate(timeout=300)
    assert first.returncode == 130, stderr
    stopped = json.loads(stdout)
    assert stopped["interrupted"] is True
    counts = stopped["status"]
    assert counts.get("completed", 0) >= 2
    assert counts.get("completed", 0) < 8, "the benchmark ended before the interrupt"
    assert counts.get("failed", 0) == 0, stderr
    before = {(c["scaffold"], c["task"], c["seed"]): c for c in stopped["cells"]}

    second = galapagos("bench", "--name", "acc", *MATRIX, "--json", "--store", str(store),
                       timeout=600)  # fmt: skip
    assert second.returncode == 0, second.stderr
    assert "8 cells (" in second.stderr and f"{counts['completed']} done before" in second.stderr
    resumed = json.loads(second.stdout)
    assert resumed["status"] == {"completed": 8}
    for cell in resumed["cells"]:
        earlier = before[(cell["scaffold"], cell["task"], cell["seed"])]
        if earlier["run_id"] is not None:  # started before: continued, not started again
            assert cell["run_id"] == earlier["run_id"]

    table = _leaderboard(store, "acc")
    keys = [(c["scaffold"], c["task"], c["seed"]) for c in table["cells"]]
    assert sorted(keys) == sorted(
        (s, t, seed) for s in ("topk", "best_of_n")
        for t in ("circle_packing", "function_minimization") for seed in (0, 1)
    )  # fmt: skip
    st = SQLiteStore(store)
    for cell in table["cells"]:
        run = st.get_run(cell["run_id"])
        assert (run.scaffold, run.task, run.seed) == (cell["scaffold"], cell["task"], cell["seed"])
        assert run.status == cell["status"] == "completed"
        assert cell["best_score"] == run.best_score
        assert cell["iterations_done"] == run.iterations_done == 3
        assert cell["tokens"] == run.tokens and cell["cost"] == run.cost
        assert cell["evaluations"] == len(st.evaluations(run.id))
    for row in table["rows"]:
        runs = [st.get_run(c["run_id"]) for c in table["cells"]
                if (c["scaffold"], c["task"]) == (row["scaffold"], row["task"])]  # fmt: skip
        scores = [r.best_score for r in runs if r.best_score is not None]
        assert row["seeds"] == 2 and row["best"] == max(scores)
        assert row["mean"] == pytest.approx(statistics.fmean(scores), abs=0)
        assert row["tokens"] == sum(r.tokens for r in runs)
        assert row["rank"] in (1, 2)
    assert [s["scaffold"] for s in table["scaffolds"]] == ["topk", "best_of_n"]

    # The same benchmark again, uninterrupted, under another name: the same table.
    again = galapagos("bench", "--name", "acc2", *MATRIX, "--json", "--store", str(store),
                      timeout=600)  # fmt: skip
    assert again.returncode == 0, again.stderr
    table2 = _leaderboard(store, "acc2")
    assert table2["rows"] == table["rows"]
    assert table2["scaffolds"] == table["scaffolds"]
    assert _without_ids(table2["cells"]) == _without_ids(table["cells"])
    assert {c["run_id"] for c in table2["cells"]}.isdisjoint(c["run_id"] for c in table["cells"])

    # A third invocation has nothing left to do and changes nothing.
    third = galapagos("bench", "--name", "acc", *MATRIX, "--json", "--store", str(store))
    assert third.returncode == 0, third.stderr
    assert json.loads(third.stdout)["evaluations"] == 0
    assert _leaderboard(store, "acc") == table

    # Plots: one curve figure per task and the heat map, as SVG and PNG.
    plots = tmp_path / "plots"
    proc = galapagos("leaderboard", "--bench", "acc", "--plots", str(plots),
                     "--csv", str(tmp_path / "t.csv"), "--store", str(store))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    names = sorted(p.name for p in plots.iterdir())
    assert names == sorted(
        f"{stem}.{ext}" for stem in ("curves_circle_packing", "curves_function_minimization",
                                     "heatmap") for ext in ("png", "svg")
    )  # fmt: skip
    for png in plots.glob("*.png"):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    assert "circle_packing" in (plots / "curves_circle_packing.svg").read_text()
    assert len((tmp_path / "t.csv").read_text().splitlines()) == 1 + 4
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for name in ("curves_circle_packing.png", "heatmap.png"):
        shutil.copy(plots / name, ARTIFACTS / name)


def test_a_broken_cell_fails_with_its_reason_and_the_others_complete(tmp_path: Path) -> None:
    broken = tmp_path / "broken_task"
    shutil.copytree(ROOT / "tasks" / "function_minimization", broken)
    card = (broken / "task.yaml").read_text()
    (broken / "task.yaml").write_text(
        card.replace("name: function_minimization", "name: broken_task")
    )
    (broken / "initial_program.py").write_text("raise RuntimeError('broken on purpose')\n")
    store = tmp_path / "s.sqlite"
    args = ["bench", "--name", "iso", "--scaffolds", "topk", "--tasks",
            f"{broken},circle_packing", "--seeds", "1", "--iterations", "2", "--json",
            "--store", str(store)]  # fmt: skip
    proc = galapagos(*args, timeout=300)
    assert proc.returncode == 1, proc.stderr
    cells = {c["task"]: c for c in json.loads(proc.stdout)["cells"]}
    assert cells["circle_packing"]["status"] == "completed"
    assert cells["broken_task"]["status"] == "failed"
    assert "seed program could not be evaluated" in cells["broken_task"]["error"]
    row = next(r for r in _leaderboard(store, "iso")["rows"] if r["task"] == "broken_task")
    assert row["failed_runs"] == 1 and row["mean"] is None and row["rank"] is None

    # Failed cells stay failed on a re-run (nothing to do) unless asked to retry.
    again = galapagos(*args)
    assert again.returncode == 1 and json.loads(again.stdout)["evaluations"] == 0


def test_a_cell_out_of_budget_is_recorded_with_its_reason(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    proc = galapagos("bench", "--name", "poor", "--scaffolds", "topk", "--tasks",
                     "function_minimization", "--iterations", "3", "--max-tokens", "1", "--json",
                     "--store", str(store), timeout=300)  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    (cell,) = json.loads(proc.stdout)["cells"]
    assert cell["status"] == "budget_exhausted"
    assert "llm.max_total_tokens" in cell["error"] or "budget" in cell["error"]
    assert cell["iterations_done"] < 3
    (row,) = _leaderboard(store, "poor")["rows"]
    assert row["failed_runs"] == 1 and row["mean"] is not None  # it keeps the best it reached
