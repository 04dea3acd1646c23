"""Every part of a run is visible (`show --only …`, each with --json) and can be taken home
(`export`): the exported best program runs and scores what the store says."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.evaluation.driver import TaskEvaluator
from harness.evaluation.task import load_task
from harness.sandbox import make_backend

runner = CliRunner()
pytestmark = pytest.mark.slow  # the module fixture runs an EvoX search (seconds)


def cli(*args: str) -> Any:
    return runner.invoke(app, list(args))


@pytest.fixture(scope="module")
def evox_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """An evox run whose strategy switches every two iterations (local sandboxes: trusted
    offline code only)."""
    store = str(tmp_path_factory.mktemp("show") / "store.sqlite")
    result = cli(
        "run", "-s", "evox", "-t", "function_minimization", "-i", "6", "--sandbox", "local",
        "--set", "memory.switch_interval=2", "--set", "memory.improvement_threshold=100",
        "--set", "memory.validation.stress_programs=50", "--json", "--store", store,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return store, json.loads(result.stdout)["run_id"]


def show(store: str, run_id: str, *args: str) -> Any:
    result = cli("show", run_id, "--store", store, *args)
    assert result.exit_code == 0, result.output
    return result


def test_events_show_strategy_switches_and_filter_by_group(evox_run: tuple[str, str]) -> None:
    store, run_id = evox_run
    every = json.loads(show(store, run_id, "--only", "events", "--json").stdout)
    switches = json.loads(
        show(store, run_id, "--only", "events", "--kind", "switches", "--json").stdout
    )
    kinds = {e["kind"] for e in every}
    assert {"seed", "select", "attempt", "admit", "strategy_switch"} <= kinds
    assert switches and {e["kind"] for e in switches} <= {
        "strategy_switch", "strategy_deployed", "strategy_trigger", "strategy_scored",
    }  # fmt: skip
    assert len([e for e in switches if e["kind"] == "strategy_switch"]) >= 2
    text = show(store, run_id, "--only", "events", "--kind", "strategy_switch").stdout
    assert text.count("strategy_switch") == len(
        [e for e in every if e["kind"] == "strategy_switch"]
    )


def test_usage_separates_meta_calls_from_solution_calls(evox_run: tuple[str, str]) -> None:
    store, run_id = evox_run
    usage = json.loads(show(store, run_id, "--only", "usage", "--json").stdout)
    purposes = {row["purpose"]: row["calls"] for row in usage["by_purpose"]}
    assert purposes["propose"] >= 6 and purposes["strategy"] >= 2
    assert sum(purposes.values()) == usage["calls"]


def test_prompts_programs_lineage_config_and_failures_are_shown(
    evox_run: tuple[str, str],
) -> None:
    store, run_id = evox_run
    calls = json.loads(
        show(store, run_id, "--only", "prompts", "--iteration", "1", "--json").stdout
    )
    assert calls and all(c["iteration"] == 1 for c in calls)
    assert "<<<<<<< SEARCH" in calls[0]["response"] and "```" in calls[0]["prompt"]
    assert "--- response ---" in show(store, run_id, "--only", "prompts", "--iteration", "1").stdout
    programs = json.loads(show(store, run_id, "--only", "programs", "--json").stdout)
    assert [p["id"] for p in programs][:2] == ["p0", "p1"]
    assert sum(p["best"] for p in programs) == 1
    tree = json.loads(show(store, run_id, "--only", "lineage", "--json").stdout)
    assert tree["roots"][0]["id"] == "p0" and tree["best_ancestry"][-1] == "p0"
    assert "best ancestry:" in show(store, run_id, "--only", "lineage").stdout
    config = json.loads(show(store, run_id, "--only", "config", "--json").stdout)
    assert config["memory"]["switch_interval"] == 2 and config["blocks"]["memory"] == (
        "strategy_history"
    )
    assert json.loads(show(store, run_id, "--only", "failures", "--json").stdout) == []


def test_show_only_code_is_plain_runnable_source(evox_run: tuple[str, str], tmp_path: Path) -> None:
    store, run_id = evox_run
    code = show(store, run_id, "--only", "code").stdout
    (tmp_path / "best.py").write_text(code)
    compiled = subprocess.run(
        [sys.executable, "-c", "import ast,sys; ast.parse(open(sys.argv[1]).read())",
         str(tmp_path / "best.py")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert compiled.returncode == 0, compiled.stderr


def test_export_writes_a_folder_whose_best_program_runs_and_scores_as_stored(
    evox_run: tuple[str, str], tmp_path: Path
) -> None:
    store, run_id = evox_run
    out = tmp_path / "exported"
    result = cli("export", run_id, "--out", str(out), "--prompts", "--json", "--store", store)
    assert result.exit_code == 0, result.output
    written = json.loads(result.stdout)
    expected = (
        "best/best_program.py", "best/best_program_info.json", "programs/index.json",
        "lineage.json", "config.yaml", "run.json", "events.jsonl", "prompts.jsonl",
    )  # fmt: skip
    for rel in expected:
        assert (out / rel).is_file(), rel
        assert rel in written["files"]
    info = json.loads((out / "best/best_program_info.json").read_text())
    summary = json.loads((out / "run.json").read_text())
    assert info["id"] == summary["best_program_id"] == written["best_program"]
    # `python best_program.py`'s module imports on its own ...
    imported = subprocess.run(
        [sys.executable, "-c", "import best_program"], cwd=out / "best",
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert imported.returncode == 0, imported.stderr
    # ... and the task's own evaluator scores the exported file as the store says.
    task = load_task("function_minimization")
    evaluator = TaskEvaluator(task, make_backend("local"), run_id="export-check")
    code = (out / "best/best_program.py").read_text()

    async def score() -> Any:
        try:
            return await evaluator.evaluate(code, program_id="x", iteration=0)
        finally:
            await evaluator.aclose()

    evaluated = asyncio.run(score())
    assert evaluated.status == "ok"
    assert evaluated.metrics["combined_score"] == pytest.approx(summary["best_score"], abs=0)
    again = cli("export", run_id, "--out", str(out), "--store", store)
    assert again.exit_code == 2 and "is not empty" in again.stderr
