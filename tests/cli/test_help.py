"""`--help` of every command: real descriptions, flags shown as flags, `--debug` placement."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from harness.cli import app

runner = CliRunner()

COMMANDS = [
    [],
    ["run"],
    ["resume"],
    ["runs"],
    ["show"],
    ["scaffolds"],
    ["tasks"],
    ["sandbox"],
    ["sandbox", "build"],
    ["sandbox", "doctor"],
    ["sandbox", "gc"],
    ["task"],
    ["task", "check"],
    ["strategy"],
    ["strategy", "validate"],
]


def help_text(*command: str) -> str:
    result = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.stdout + result.stderr
    return result.stdout


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "galapagos")
def test_boolean_flags_take_no_value_in_help(command: list[str]) -> None:
    text = help_text(*command)
    assert "--help" in text
    assert "<bool>" not in text and "BOOLEAN" not in text


def test_command_groups_describe_themselves() -> None:
    root = help_text()
    for placeholder in ("task commands", "strategy commands"):
        assert placeholder not in root
    assert "task check" in help_text("task") or "evaluator" in help_text("task")
    assert "Valid" in help_text("strategy")


def test_debug_says_it_goes_before_the_command() -> None:
    text = " ".join(help_text().split())
    assert "before the command (galapagos --debug run" in text.split("--debug", 1)[1]


def test_validate_and_doctor_list_their_documented_flags() -> None:
    assert "--no-prefilter" in help_text("strategy", "validate")
    doctor = help_text("sandbox", "doctor")
    assert "--no-canaries" in doctor and "--json" in doctor
