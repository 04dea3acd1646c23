"""Living with runs: progress without a terminal, hints that keep --store, listings of a store
not yet created, extending a finished run exactly, starting from another run's best, and the
usual CLI conventions (--version, -h, no secret echoed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.store.sqlite import SQLiteStore

runner = CliRunner()


def local(store: Path, *args: str) -> Any:
    base = ["--sandbox", "local", "--store", str(store)]
    return runner.invoke(
        app, [*args, *base] if args[0] == "run" else [*args, "--store", str(store)]
    )


def run_json(store: Path, *args: str) -> dict[str, Any]:
    result = local(store, "run", "-t", "function_minimization", "--json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def lineage(store: Path, run_id: str) -> list[tuple[Any, ...]]:
    opened = SQLiteStore(store)
    try:
        return [(p.id, p.parent_id, p.code, p.score) for p in opened.programs(run_id)]
    finally:
        opened.close()


def test_without_a_terminal_each_iteration_prints_a_plain_line(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    result = local(store, "run", "-s", "topk", "-t", "function_minimization", "-i", "3")
    assert result.exit_code == 0, result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("iteration ")]
    assert [ln.split()[1] for ln in lines] == ["0/3", "1/3", "2/3", "3/3"]
    assert all("best " in ln and "evals/s" in ln and "tokens" in ln for ln in lines)


def test_quiet_prints_no_progress(tmp_path: Path) -> None:
    result = local(
        tmp_path / "s.sqlite", "run", "-s", "topk", "-t", "function_minimization", "-i", "2", "-q"
    )
    assert result.exit_code == 0, result.output
    assert not [ln for ln in result.stderr.splitlines() if ln.startswith("iteration ")]
    assert "run " in result.stdout  # the summary stays


@pytest.mark.slow
def test_hints_keep_the_store_they_were_given(tmp_path: Path) -> None:
    store = tmp_path / "elsewhere.sqlite"
    result = local(store, "run", "-s", "topk", "-t", "function_minimization", "-i", "1")
    assert result.exit_code == 0, result.output
    hint = next(ln for ln in result.stderr.splitlines() if ln.startswith("inspect with:"))
    assert hint.endswith(f"--store {store}")
    shown = runner.invoke(app, hint.split()[3:])  # the hint's command works as printed
    assert shown.exit_code == 0, shown.output


def test_listings_of_a_store_not_yet_created_are_empty(tmp_path: Path) -> None:
    missing = tmp_path / "later" / "store.sqlite"
    for command in (["runs", "--json"], ["tasks", "--json"]):
        result = runner.invoke(app, [*command, "--store", str(missing)])
        assert result.exit_code == 0, result.output
        rows = json.loads(result.stdout)
        if command[0] == "runs":
            assert rows == []
        else:
            assert {row["best_stored_run"] for row in rows} == {None}
        assert f"no run store at {missing} yet" in result.stderr
    assert not missing.parent.exists()  # nothing was created


@pytest.mark.slow
def test_resume_with_more_iterations_equals_asking_for_them_at_the_start(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    whole = run_json(store, "-s", "best_of_n", "-i", "6", "--seed", "4")
    short = run_json(store, "-s", "best_of_n", "-i", "3", "--seed", "4")
    refused = local(store, "resume", short["run_id"])
    assert refused.exit_code == 2 and "--iterations N" in refused.stderr
    extended = runner.invoke(
        app, ["resume", short["run_id"], "--iterations", "6", "--json", "--store", str(store)]
    )
    assert extended.exit_code == 0, extended.output
    data = json.loads(extended.stdout)
    assert data["status"] == "completed" and data["iterations_done"] == 6
    assert data["max_iterations"] == 6
    assert lineage(store, short["run_id"]) == lineage(store, whole["run_id"])
    assert data["tokens"] == whole["tokens"] and data["best_score"] == whole["best_score"]
    fewer = local(store, "resume", short["run_id"], "--iterations", "5")
    assert fewer.exit_code == 2 and "give a larger total" in fewer.stderr


@pytest.mark.slow
def test_a_new_run_starts_from_another_runs_best_program(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    first = run_json(store, "-s", "topk", "-i", "3")
    second = local(store, "run", "-s", "topk", "-i", "1", "--from", first["run_id"], "--json")
    assert second.exit_code == 0, second.output
    data = json.loads(second.stdout)
    assert data["task"] == "function_minimization"  # the source run's task by default
    opened = SQLiteStore(store)
    best = next(p for p in opened.programs(first["run_id"]) if p.id == first["best_program_id"])
    seed = opened.programs(data["run_id"])[0]
    config = opened.get_run(data["run_id"]).config
    opened.close()
    assert seed.id == "p0" and seed.code == best.code
    assert data["seed_score"] == first["best_score"]
    assert config["seed_from"]["run_id"] == first["run_id"]
    unknown = local(store, "run", "-s", "topk", "-i", "1", "--from", f"{first['run_id']}:p99")
    assert unknown.exit_code == 2 and "has no program 'p99'" in unknown.stderr


def test_version_and_short_help() -> None:
    version = runner.invoke(app, ["--version"])
    assert version.exit_code == 0 and version.stdout.startswith("galapagos ")
    short = runner.invoke(app, ["run", "-h"])
    assert short.exit_code == 0 and "--scaffold" in short.stdout


def test_a_refused_secret_is_not_repeated(tmp_path: Path) -> None:
    result = local(
        tmp_path / "s.sqlite", "run", "-s", "topk", "-t", "circle_packing",
        "--set", "llm.api_key=sk-live-123456789",
    )  # fmt: skip
    assert result.exit_code == 2
    assert "sk-live-123456789" not in result.output and "llm.api_key=***" in result.stderr
