"""Compat folders keep their own config (OpenEvolve's and SkyDiscover's formats): the system
message the model is sent, the evaluator timeout, the cascade thresholds, search defaults, and
one note naming what is not used; a native task's own system message too.  Through the CLI,
against the offline model; the timeout and the cascade in Docker, where candidates run."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest

from harness.evaluation.task import load_task
from harness.store.sqlite import SQLiteStore
from tests.cli.helpers import galapagos

OE_MESSAGE = "You are a quadratic-peak specialist (OE-FIXTURE-7731).\n\nThe peak is near 0.3.\n"
SD_MESSAGE = "You optimise one-dimensional peaks (SD-FIXTURE-4402); prefer exact answers."
NATIVE_MESSAGE = "NATIVE-FIXTURE-991 knows where the minimum is."

EVALUATOR = '''"""Compat fixture: stage 1 screens (0.6), stage 2 scores (OpenEvolve style)."""
import importlib.util


def _load(path):
    spec = importlib.util.spec_from_file_location("program", path)
    program = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(program)
    return program


def evaluate_stage1(program_path):
    x = _load(program_path).solve()
    return {"combined_score": 0.6, "stage1_x": float(x)}


def evaluate_stage2(program_path):
    x = _load(program_path).solve()
    return {"combined_score": 1.0 - (x - 0.3) ** 2}


def evaluate(program_path):
    return evaluate_stage2(program_path)
'''

SEED = '''"""Compat fixture seed."""
import time

# EVOLVE-BLOCK-START
DELAY = {delay}


def solve():
    time.sleep(DELAY)
    return 0.7
# EVOLVE-BLOCK-END
'''


def folder(tmp_path: Path, name: str, config: str | None, *, delay: float = 0.0) -> Path:
    path = tmp_path / name
    path.mkdir(parents=True)
    (path / "evaluator.py").write_text(EVALUATOR)
    (path / "initial_program.py").write_text(SEED.format(delay=delay))
    if config is not None:
        (path / "config.yaml").write_text(textwrap.dedent(config))
    return path


OPENEVOLVE = """\
max_iterations: 2
random_seed: 9
diff_based_evolution: true
max_code_length: 20000
llm:
  primary_model: peak-large
  primary_model_weight: 0.8
  secondary_model: peak-small
  temperature: 0.5
prompt:
  system_message: |
    You are a quadratic-peak specialist (OE-FIXTURE-7731).

    The peak is near 0.3.
  num_top_programs: 3
database:
  population_size: 500
  num_islands: 3
evaluator:
  timeout: 30
  cascade_evaluation: true
  cascade_thresholds: [0.5]
  parallel_evaluations: 2
"""

SKYDISCOVER = """\
max_iterations: 2
diff_based_generation: true
prompt:
  system_message: system_prompt.txt
search:
  type: topk
  num_context_programs: 3
evaluator:
  timeout: 30
monitor:
  enabled: false
"""


def sent_system_messages(store: Path, run_id: str) -> list[str]:
    """The system message of every solution prompt the run sent (the store keeps the system
    message, a blank line, then the user message)."""
    opened = SQLiteStore(store)
    try:
        calls = [c for c in opened.llm_exchanges(run_id) if c["purpose"] == "propose"]
    finally:
        opened.close()
    assert calls, "the run made no solution calls"
    return [c["prompt"] for c in calls]


def assert_system_message(store: Path, run_id: str, expected: str) -> None:
    for prompt in sent_system_messages(store, run_id):
        # The system message, then the user message (which opens with the task section).
        assert prompt.startswith(expected), prompt[:300]
        assert prompt[len(expected) :].lstrip("\n").startswith("# Task\n"), prompt[:300]


def run(tmp_path: Path, task: Path | str, *extra: str, sandbox: str = "local") -> Any:
    tmp_path.mkdir(parents=True, exist_ok=True)
    store = tmp_path / "s.sqlite"
    proc = galapagos(
        "run", "-s", "topk", "-t", str(task), "--json", "--sandbox", sandbox,
        "--store", str(store), *extra, timeout=600,
    )  # fmt: skip
    return proc, store


def note(stderr: str, marker: str) -> str:
    lines = [line for line in stderr.splitlines() if marker in line]
    assert len(lines) == 1, stderr
    return lines[0]


@pytest.mark.slow
def test_an_openevolve_folder_sends_its_system_message_and_names_what_it_ignores(
    tmp_path: Path,
) -> None:
    path = folder(tmp_path, "oe", OPENEVOLVE)
    proc, store = run(tmp_path, path)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["max_iterations"] == 2  # the folder's max_iterations, as a default
    assert summary["seed"] == 9  # its random_seed
    assert_system_message(store, summary["run_id"], OE_MESSAGE)
    # Run with topk: the openevolve method's keys are named as such, with why.
    unused = note(proc.stderr, "openevolve's settings")
    for key in ("prompt.num_top_programs", "database.population_size", "database.num_islands",
                "evaluator.parallel_evaluations"):  # fmt: skip
        assert key in unused
    applied = note(proc.stderr, "applies:")
    for key in ("prompt.system_message", "evaluator.timeout", "evaluator.cascade_thresholds",
                "max_iterations → general.max_iterations",
                "llm.primary_model/llm.secondary_model → llm.models"):  # fmt: skip
        assert key in applied
    # The folder's models are defaults: no endpoint is named, so the offline model answers
    # under those names (and says so).
    assert "llm.models names models, but no endpoint is configured" in proc.stderr
    opened = SQLiteStore(store)
    config = opened.get_run(summary["run_id"]).config
    opened.close()
    assert [(m["name"], m["weight"], m["temperature"]) for m in config["llm"]["models"]] == [
        ("peak-large", 0.8, 0.5),
        ("peak-small", 0.2, 0.5),
    ]


@pytest.mark.slow
def test_flags_and_set_override_the_folders_defaults(tmp_path: Path) -> None:
    path = folder(tmp_path, "oe", OPENEVOLVE)
    proc, store = run(tmp_path, path, "-i", "1", "--set", "prompt.system_message=mine")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["max_iterations"] == 1
    assert_system_message(store, summary["run_id"], "mine")
    # The notes say what the folder's file still decides, and what you decided instead.
    applied = note(proc.stderr, "applies:")
    assert "evaluator.timeout" in applied and "llm.primary_model" in applied
    assert "max_iterations" not in applied and "prompt.system_message" not in applied
    overridden = note(proc.stderr, "overridden by your settings:")
    assert "max_iterations → general.max_iterations" in overridden
    assert "prompt.system_message" in overridden
    assert "llm." not in overridden


@pytest.mark.slow
def test_models_and_seed_given_by_you_are_not_named_as_the_folders(tmp_path: Path) -> None:
    path = folder(tmp_path, "oe", OPENEVOLVE)
    proc, _ = run(tmp_path, path, "--set", "llm.models=[{name: mine}]", "--seed", "4")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["seed"] == 4
    applied = note(proc.stderr, "applies:")
    assert "llm.models" not in applied and "random_seed" not in applied
    overridden = note(proc.stderr, "overridden by your settings:")
    assert "llm.primary_model/llm.secondary_model → llm.models" in overridden
    assert "random_seed → seed" in overridden


@pytest.mark.slow
def test_a_skydiscover_folder_reads_its_system_message_file(tmp_path: Path) -> None:
    path = folder(tmp_path, "sd", SKYDISCOVER)
    (path / "system_prompt.txt").write_text(SD_MESSAGE)
    proc, store = run(tmp_path, path)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert_system_message(store, summary["run_id"], SD_MESSAGE)
    # topk is the folder's method: its search keys apply; the dashboard is named.
    applied = note(proc.stderr, "applies:")
    assert "search.num_context_programs → selection_policy.num_inspirations" in applied
    assert "monitor.enabled" in note(proc.stderr, "not used here")
    assert "search.type" not in proc.stderr


@pytest.mark.slow
def test_task_config_chooses_another_file_of_the_folder(tmp_path: Path) -> None:
    path = folder(tmp_path, "oe", None)
    (path / "config_phase_1.yaml").write_text("max_iterations: 1\nprompt:\n  system_message: P1\n")
    plain, _ = run(tmp_path / "a", path, "-i", "1")
    assert plain.returncode == 0, plain.stderr  # no config.yaml: the phases are named, unused
    assert "has no config.yaml; not used: config_phase_1.yaml (choose one with --task-config" in (
        plain.stderr
    )
    proc, store = run(tmp_path / "b", path, "--task-config", "config_phase_1.yaml")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["max_iterations"] == 1
    assert_system_message(store, summary["run_id"], "P1")
    missing, _ = run(tmp_path / "c", path, "--task-config", "config_phase_9.yaml")
    assert missing.returncode == 2
    assert "no config file 'config_phase_9.yaml'" in missing.stderr
    assert "its config files: config_phase_1.yaml" in missing.stderr


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("evaluator:\n  timeout: [unclosed\n", "malformed YAML in"),
        ("whatever: 1\ncheckpoints: 2\n", "not an OpenEvolve or SkyDiscover config"),
        ("search: {}\ndiff_based_evolution: true\n", "a SkyDiscover key in a file with OpenEvolve"),
        ("search: {}\nevaluator:\n  timeout: soon\n", "expected a positive number, got 'soon'"),
    ],
)
def test_a_bad_folder_config_is_one_line_with_its_file(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = folder(tmp_path, "bad", None)
    (path / "config.yaml").write_text(text)
    proc, _ = run(tmp_path, path)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0] and "config.yaml" in lines[0], proc.stderr
    assert " at line " in lines[0] and ", column " in lines[0]


@pytest.mark.slow
def test_a_bad_search_default_is_reported_against_the_folders_file(tmp_path: Path) -> None:
    path = folder(tmp_path, "bad", "max_iterations: -3\ndatabase: {}\n")
    proc, _ = run(tmp_path, path)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and f"({path / 'config.yaml'}:1)" in lines[0], proc.stderr
    assert "general.max_iterations" in lines[0]
    fixed, _ = run(tmp_path / "ok", path, "-i", "0")  # a flag over it: still an error
    assert fixed.returncode == 2, fixed.stderr


def test_an_unreachable_endpoint_of_the_folder_says_where_it_came_from(tmp_path: Path) -> None:
    path = folder(tmp_path, "oe", "database: {}\nllm:\n  api_base: http://127.0.0.1:9/v1\n")
    proc, _ = run(tmp_path, path, "-i", "1", "-m", "some-model")
    assert proc.returncode != 0
    assert f"llm.api_base in {path / 'config.yaml'}; pass --api-base" in proc.stderr


@pytest.mark.slow
def test_a_native_task_sends_its_own_system_message(tmp_path: Path) -> None:
    shipped = load_task("function_minimization")
    proc, store = run(tmp_path / "a", "function_minimization", "-i", "1")
    assert proc.returncode == 0, proc.stderr
    assert shipped.card.system_message
    assert_system_message(store, json.loads(proc.stdout)["run_id"], shipped.card.system_message)
    assert "not used here" not in proc.stderr

    path = tmp_path / "fm"
    shutil.copytree(shipped.path, path)
    card = path / "task.yaml"
    kept = card.read_text().split("\nsystem_message:", 1)[0]
    card.write_text(kept + f'\nsystem_message: "{NATIVE_MESSAGE}"\n')
    proc, store = run(tmp_path / "b", path, "-i", "1")
    assert proc.returncode == 0, proc.stderr
    assert_system_message(store, json.loads(proc.stdout)["run_id"], NATIVE_MESSAGE)


@pytest.mark.slow
def test_task_check_reports_what_the_folders_config_contributes(tmp_path: Path) -> None:
    path = folder(tmp_path, "oe", OPENEVOLVE)
    proc = galapagos("task", "check", str(path), "--sandbox", "local", "--json", timeout=600)
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    (check,) = [c for c in report["checks"] if c["name"] == "folder_config"]
    assert check["status"] == "pass"
    data = check["data"]
    assert data["format"] == "openevolve"
    assert data["task_keys"] == [
        "prompt.system_message",
        "evaluator.timeout",
        "evaluator.cascade_evaluation",
        "evaluator.cascade_thresholds",
    ]
    assert data["search_defaults"]["general.max_iterations"] == "max_iterations"
    assert data["method"] == data["scaffold"] == "openevolve"
    assert data["method_defaults"]["population.num_islands"] == "database.num_islands"
    assert data["not_used"] == [] and data["not_used_why"] == {}  # every key applies


def seed_result(store: Path, proc: Any) -> Any:
    opened = SQLiteStore(store)
    try:
        return opened.evaluations(json.loads(proc.stdout)["run_id"])[0]["result"]
    finally:
        opened.close()


@pytest.mark.docker
def test_the_folders_evaluator_timeout_is_applied(tmp_path: Path) -> None:
    """A seed that takes 2 s per stage: the default limit lets it finish; a folder's
    ``evaluator.timeout: 1`` (either format) stops it."""
    plain = folder(tmp_path / "d", "plain", None, delay=2.0)
    ok, store = run(tmp_path / "d", plain, "-i", "0", sandbox="docker")
    assert ok.returncode == 0, ok.stderr
    assert seed_result(store, ok)["status"] == "ok"
    for fmt, head in (("oe", "database: {}\n"), ("sd", "search: {}\n")):
        strict = folder(tmp_path / fmt, "strict", head + "evaluator:\n  timeout: 1\n", delay=2.0)
        failed, store = run(tmp_path / fmt, strict, "-i", "0", sandbox="docker")
        assert failed.returncode == 1, failed.stderr
        assert "could not be evaluated (timeout" in json.loads(failed.stdout)["error"]
        assert seed_result(store, failed)["timed_out"] is True


@pytest.mark.docker
def test_the_folders_cascade_thresholds_stop_a_stage_the_defaults_would_pass(
    tmp_path: Path,
) -> None:
    """Stage 1 scores 0.6: above the default first thresholds (OpenEvolve 0.5, SkyDiscover
    0.3), below the folder's 0.7, in either format.  In Docker, as a real run's candidates."""
    plain = folder(tmp_path / "d", "defaults", "max_iterations: 0\n")
    passes, store = run(tmp_path / "d", plain, sandbox="docker")
    assert passes.returncode == 0, passes.stderr
    result = seed_result(store, passes)
    assert [s["stage"] for s in result["stages"]] == ["evaluate_stage1", "evaluate_stage2"]
    assert result["metrics"]["combined_score"] == pytest.approx(1.0 - 0.4**2)
    for fmt, head in (("oe", "database: {}\n"), ("sd", "search: {}\n")):
        config = head + "evaluator:\n  cascade_thresholds: [0.7]\n"
        stops, store = run(tmp_path / fmt, folder(tmp_path / fmt, "strict", config), "-i", "0",
                           sandbox="docker")  # fmt: skip
        assert stops.returncode == 0, stops.stderr  # a stopped cascade is a result
        result = seed_result(store, stops)
        assert [s["stage"] for s in result["stages"]] == ["evaluate_stage1"], fmt
        assert result["metrics"]["combined_score"] == pytest.approx(0.6)


@pytest.mark.docker
@pytest.mark.slow
def test_a_folders_requirements_go_into_its_image(tmp_path: Path) -> None:
    """A package the default image lacks (six) is layered into a derived image; one it has
    (numpy) changes nothing.  The evaluator imports six inside the sandbox."""
    path = folder(tmp_path, "req", None)
    (path / "requirements.txt").write_text("numpy\nsix==1.16.0  # pinned\n-r other.txt\n")
    (path / "evaluator.py").write_text(
        EVALUATOR.replace(
            "import importlib.util\n", "import importlib.util\n\nimport six\n"
        ).replace(
            '{"combined_score": 1.0 - (x - 0.3) ** 2}',
            '{"combined_score": 1.0 - (x - 0.3) ** 2, "six": float(six.PY3)}',
        )
    )
    proc, store = run(tmp_path, path, "-i", "0", "--set", "evaluator.timeout_s=120",
                      sandbox="docker")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    said = note(proc.stderr, "requirements.txt lists")
    assert "python-eval+six==1.16.0" in said and "numpy" in said
    opened = SQLiteStore(store)
    (evaluation,) = opened.evaluations(json.loads(proc.stdout)["run_id"])
    opened.close()
    assert evaluation["result"]["metrics"]["six"] == 1.0
