"""The hub's benchmarks and leaderboard come from the benchmark library and its store tags."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from harness.benchmark import leaderboard
from harness.core.store import IterationCommit, RunRecord
from harness.store import BenchmarkCell, SQLiteStore

TASKS = ("circle_packing", "function_minimization")
#: scaffold → best score per task (seed 0, seed 1)
BEST = {"topk": ((0.8, 0.9), (0.5, 0.7)), "best_of_n": ((0.85, 0.95), (0.4, 0.4))}


def _store_benchmark(path: Path) -> SQLiteStore:
    store = SQLiteStore(path)
    cells = [BenchmarkCell("week1", s, t, seed, 4 * i + 2 * j + seed)
             for i, s in enumerate(BEST) for j, t in enumerate(TASKS)
             for seed in (0, 1)]  # fmt: skip
    matrix = {"scaffolds": list(BEST), "tasks": list(TASKS), "seeds": [0, 1], "iterations": 1}
    store.benchmarks.create_benchmark("week1", matrix, cells)
    for scaffold, per_task in BEST.items():
        for task, scores in zip(TASKS, per_task, strict=True):
            for seed, best in enumerate(scores):
                run_id = f"{scaffold}-{task}-{seed}"
                store.create_run(
                    RunRecord(run_id, scaffold, task, "", {}, seed, 1, status="completed",
                              best_score=best, seed_score=0.1, prompt_tokens=7)
                )  # fmt: skip
                store.commit_iteration(IterationCommit(run_id, 0, "ok", best_score=0.1))
                store.commit_iteration(IterationCommit(run_id, 1, "ok", best_score=best))
                store.benchmarks.set_cell("week1", scaffold, task, seed, run_id=run_id)
    store.create_run(RunRecord("loose-1", "topk", "circle_packing", "", {}, 0, 1, best_score=0.3))
    return store


def test_benchmarks_and_leaderboard_come_from_the_tags(client: TestClient, hub_store: Path) -> None:
    store = _store_benchmark(hub_store)
    listed = client.get("/api/v1/benchmarks").json()
    assert [(b["name"], b["cells"], b["runs"], b["completed"]) for b in listed] == [
        ("week1", 8, 8, 8)
    ]
    assert (listed[0]["seeds"], listed[0]["scaffolds"]) == (2, ["topk", "best_of_n"])
    board = client.get("/api/v1/leaderboard").json()  # the newest benchmark
    table = leaderboard(store, "week1")
    assert board["benchmark"] == "week1"
    assert board["rows"] == table["rows"] and board["cells"] == table["cells"]
    ranks = {(r["scaffold"], r["task"]): r["rank"] for r in board["rows"]}
    # circle_packing: 0.85/0.95 against 0.8/0.9, overlapping intervals over two seeds: a tie.
    assert ranks == {("best_of_n", "circle_packing"): 1, ("topk", "circle_packing"): 1,
                     ("topk", "function_minimization"): 1,
                     ("best_of_n", "function_minimization"): 2}  # fmt: skip
    assert "loose-1" not in {c["run_id"] for c in board["cells"]}
    one = client.get("/api/v1/leaderboard?benchmark=week1&task=circle_packing").json()
    assert {r["task"] for r in one["rows"]} == {"circle_packing"} and len(one["cells"]) == 4
    assert client.get("/api/v1/leaderboard?benchmark=nope").status_code == 404

    page = client.get("/leaderboard")
    assert page.status_code == 200
    assert 'id="benchmark-board"' in page.text and "week1" in page.text
    # The loose run is listed apart from the benchmark, the benchmark's runs are not.
    outside = page.text.split("Runs outside any benchmark", 1)[1]
    assert "loose-1" in outside
    assert "topk-circle_packing-" not in outside and "best_of_n-circle_packing-" not in outside
    assert client.get("/leaderboard?benchmark=nope").status_code == 404
    store.close()
