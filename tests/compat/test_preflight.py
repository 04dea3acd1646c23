"""A compat folder that needs what its sandbox image lacks stops before any LLM call, with one
line naming each missing piece, who needs it and how to add it (``harness.evaluation.preflight``);
what the folder does not need is not asked for.  In Docker, where candidates run; plus an
``async def evaluate`` and an evaluator's artifacts reaching the next prompt."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from harness.evaluation.preflight import missing_message, needs_of
from harness.store.sqlite import SQLiteStore
from tests.cli.helpers import galapagos

SEED = "# EVOLVE-BLOCK-START\nX = 0.25\n# EVOLVE-BLOCK-END\n\n\ndef value():\n    return X\n"


def folder(tmp_path: Path, evaluator: str, seed: str = SEED, **files: str) -> Path:
    path = tmp_path / "task"
    path.mkdir(parents=True)
    (path / "evaluator.py").write_text(textwrap.dedent(evaluator))
    (path / "initial_program.py").write_text(seed)
    (path / "config.yaml").write_text("database: {}\nevaluator: {cascade_evaluation: false}\n")
    for name, text in files.items():
        (path / name).write_text(textwrap.dedent(text))
    return path


LOADER = """\
import importlib.util


def _load(path):
    spec = importlib.util.spec_from_file_location("candidate", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
"""


def test_needs_are_read_from_what_runs_not_from_every_file(tmp_path: Path) -> None:
    path = folder(
        tmp_path,
        """\
        import numpy
        import helpers
        try:
            import torch  # optional
        except ImportError:
            torch = None


        def evaluate(program_path):
            import subprocess
            subprocess.run(["cargo", "build"])
            return {"combined_score": 1.0}


        def plot():
            import matplotlib  # only for a human, never called by the run
        """,
        **{"compare.py": "import pandas\n", "helpers.py": "import sympy\n"},
    )
    needs = needs_of(path, path / "evaluator.py", path / "initial_program.py", "python")
    assert needs.modules == {"numpy": "evaluator.py", "sympy": "helpers.py"}
    assert needs.commands == {"cargo": "evaluator.py"}
    rust = needs_of(path, path / "evaluator.py", None, "rust")
    assert "cargo" in rust.commands
    message = missing_message("t", "python-eval", needs, ["sympy"], ["cargo"], "python")
    assert (
        "\n" not in message
        and "sympy (helpers.py)" in message
        and "cargo (evaluator.py)" in (message)
    )
    assert "requirements.txt" in message and "No LLM call was made" in message


@pytest.mark.docker
@pytest.mark.slow
def test_a_missing_package_and_command_stop_the_run_before_any_llm_call(tmp_path: Path) -> None:
    path = folder(
        tmp_path,
        LOADER
        + """
import subprocess
import galapagos_missing_package


def evaluate(program_path):
    subprocess.run(["galapagos-missing-tool", "--version"])
    return {"combined_score": float(_load(program_path).value())}
""",
    )
    store = tmp_path / "s.sqlite"
    done = galapagos(
        "run", "--task", str(path), "--offline", "-i", "2", "--store", str(store), "--json",
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    summary = json.loads(done.stdout)
    error = summary["error"]
    assert "galapagos_missing_package (evaluator.py)" in error
    assert "galapagos-missing-tool (evaluator.py)" in error and "No LLM call was made" in error
    opened = SQLiteStore(store)
    try:
        assert opened.llm_exchanges(summary["run_id"]) == []
        assert opened.evaluation_count(summary["run_id"]) == 0  # not even the seed's
    finally:
        opened.close()


@pytest.mark.docker
@pytest.mark.slow
def test_an_async_evaluator_and_its_artifacts_reach_the_next_prompt(tmp_path: Path) -> None:
    """OpenEvolve's R example defines ``async def evaluate``; an ``EvaluationResult``'s artifacts
    are shown to the model as the parent's execution output (its
    ``circle_packing_with_artifacts``)."""
    path = folder(
        tmp_path,
        LOADER
        + """
from openevolve.evaluation_result import EvaluationResult


async def evaluate(program_path):
    x = float(_load(program_path).value())
    return EvaluationResult(
        metrics={"combined_score": 1.0 - (x - 0.7) ** 2},
        artifacts={"stdout": f"ARTIFACT-FIXTURE-5519 x={x}"},
    )
""",
    )
    store = tmp_path / "s.sqlite"
    done = galapagos(
        "run", "--task", str(path), "--offline", "-i", "2", "--store", str(store), "--json",
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["seed_score"] == pytest.approx(1.0 - 0.45**2)
    opened = SQLiteStore(store)
    try:
        prompts = [c["prompt"] for c in opened.llm_exchanges(summary["run_id"])]
    finally:
        opened.close()
    assert prompts and "## Last Execution Output" in prompts[0]
    assert "ARTIFACT-FIXTURE-5519 x=0.25" in prompts[0]
