"""A run that ends but whose iterations failed says so: on stderr, in ``show`` and in --json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.store.sqlite import SQLiteStore

runner = CliRunner()


def local_run(store: str, scaffold: str, iterations: int, *extra: str) -> Any:
    """``galapagos run … --json`` on function_minimization, offline, in the local sandbox."""
    args = ["run", "-s", scaffold, "-t", "function_minimization", "-i", str(iterations)]
    return runner.invoke(app, [*args, "--json", *extra, "--sandbox", "local", "--store", store])


def test_a_seed_that_cannot_be_evaluated_stops_before_any_llm_call(tmp_path: Path) -> None:
    store = str(tmp_path / "store.sqlite")
    result = local_run(store, "best_of_n", 5, "--set", "evaluator.timeout_s=0.001")
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)  # the summary is printed all the same
    assert data["status"] == "failed" and data["iterations_done"] == 0
    assert "did not finish" in data["seed_error"]
    assert "the seed program could not be evaluated (timeout" in data["error"]
    assert "no LLM call was made" in result.stderr
    opened = SQLiteStore(tmp_path / "store.sqlite")
    assert opened.llm_calls(data["run_id"]) == []
    opened.close()


def test_failed_iterations_and_seed_are_reported(tmp_path: Path) -> None:
    store = str(tmp_path / "store.sqlite")
    result = local_run(
        store, "best_of_n", 2, "--set", "evaluator.timeout_s=0.001",
        "--set", "general.stop_on_failed_seed=false",
    )  # fmt: skip
    assert result.exit_code == 1, result.output  # every iteration failed: nothing searched
    data = json.loads(result.stdout)
    assert data["status"] == "completed" and data["iterations_failed"] == 2
    assert data["failure_reasons"][0]["outcome"] == "evaluation_failed (timeout)"
    assert data["failure_reasons"][0]["iterations"] == 2
    assert "did not finish" in data["seed_error"]
    assert "warning: the seed program failed to evaluate" in result.stderr
    assert "2 of 2 iterations produced no valid program: 2 x evaluation_failed" in result.stderr

    shown = runner.invoke(app, ["show", data["run_id"], "--store", store])
    assert "2 of 2 iterations produced no valid program" in shown.stdout
    failed = runner.invoke(app, ["show", data["run_id"], "--store", store, "--only", "failures"])
    lines = [ln for ln in failed.stdout.splitlines() if ln.startswith("iteration ")]
    assert len(lines) == 2 and all("evaluation_failed (timeout)" in ln for ln in lines)


def test_a_healthy_run_prints_no_warning(tmp_path: Path) -> None:
    store = str(tmp_path / "store.sqlite")
    result = local_run(store, "best_of_n", 2)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["iterations_failed"] == 0 and data["seed_error"] is None
    assert "warning" not in result.stderr


@pytest.mark.slow
def test_an_ambiguous_prefix_lists_the_runs_it_matches(tmp_path: Path) -> None:
    store = str(tmp_path / "store.sqlite")
    ids = []
    for seed in ("1", "2"):
        result = local_run(store, "topk", 1, "--seed", seed)
        ids.append(json.loads(result.stdout)["run_id"])
    shown = runner.invoke(app, ["show", ids[0][:4], "--store", store])
    assert shown.exit_code == 2
    assert "matches 2 runs" in shown.stderr and all(i in shown.stderr for i in ids)


def test_show_only_selects_the_json_part(tmp_path: Path) -> None:
    store = str(tmp_path / "store.sqlite")
    result = local_run(store, "topk", 1)
    run_id = json.loads(result.stdout)["run_id"]
    full = json.loads(runner.invoke(app, ["show", run_id, "--json", "--store", store]).stdout)
    assert {"best_program", "score_history", "llm_usage"} <= set(full)
    code = runner.invoke(app, ["show", run_id, "--json", "--only", "code", "--store", store])
    assert json.loads(code.stdout) == full["best_program"]
    usage = runner.invoke(app, ["show", run_id, "--json", "--only", "usage", "--store", store])
    assert json.loads(usage.stdout) == full["llm_usage"]


def test_parallelism_a_scaffold_cannot_use_is_noted(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        ["run", "-s", "evox", "-t", "function_minimization", "-i", "1", "--sandbox", "local"]
        + ["--set", "general.max_parallel_iterations=3", "--store", str(tmp_path / "s.sqlite")],
    )
    assert result.exit_code == 0, result.output
    assert "general.max_parallel_iterations=3 ignored" in " ".join(result.stderr.split())
