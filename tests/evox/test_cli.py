"""`galapagos strategy validate`: per-check lines or JSON on stdout, exit 0/1/2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli import app
from scaffolds.evox.seed import seed_source
from tests.evox.strategies import FAILS_EXACTLY

runner = CliRunner()


def write(tmp_path: Path, source: str) -> str:
    path = tmp_path / "strategy.py"
    path.write_text(source)
    return str(path)


def test_a_passing_strategy_prints_every_check_and_exits_0(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        [
            "strategy",
            "validate",
            write(tmp_path, seed_source()),
            "--sandbox",
            "local",
            "--stress",
            "100",
        ],
    )
    assert result.exit_code == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[-1] == "20 of 20 checks passed"
    assert [line.split()[0] for line in lines[:-1]] == ["PASS"] * 20
    assert "UNSAFE" not in result.stdout and "validating" in result.stderr


def test_a_failing_strategy_exits_1_with_a_json_report(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        [
            "strategy",
            "validate",
            write(tmp_path, FAILS_EXACTLY["labels"]),
            "--sandbox",
            "local",
            "--json",
            "--stress",
            "100",
        ],
    )
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    statuses = {c["name"]: c["status"] for c in report["checks"]}
    assert report["passed"] is False and statuses["labels"] == "fail"
    assert statuses["memory"] == "skipped" and statuses["stress"] == "skipped"
    assert "strategy rejected: labels" in result.stderr


def test_the_prefilter_runs_first(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        [
            "strategy",
            "validate",
            write(tmp_path, "import socket\n"),
            "--sandbox",
            "local",
            "--json",
        ],
    )
    assert result.exit_code == 1
    checks = json.loads(result.stdout)["checks"]
    assert checks[0]["name"] == "prefilter" and checks[0]["status"] == "fail"
    assert "network access" in checks[0]["detail"]


@pytest.mark.parametrize("content", [None, b"\xff\xfe not utf-8"])
def test_an_unreadable_file_is_bad_input(tmp_path: Path, content: bytes | None) -> None:
    path = tmp_path / "strategy.py"
    if content is not None:
        path.write_bytes(content)
    result = runner.invoke(app, ["strategy", "validate", str(path), "--sandbox", "local"])
    assert result.exit_code == 2
    assert result.stdout == "" and "strategy file" in result.stderr


def test_checks_not_run_print_skip_like_task_check(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["strategy", "validate", write(tmp_path, "import socket\n"), "--sandbox", "local"]
    )
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("FAIL prefilter")
    assert sum(line.startswith("SKIP ") for line in lines) == 19
    assert "SKIPPED" not in result.stdout
