"""Compat folders keep their own config (OpenEvolve's and SkyDiscover's formats): the system
message the model is sent, the evaluator timeout, the cascade thresholds, search defaults, and
one note naming what is not used; a native task's own system message too.  Through the CLI,
against the offline model; the cascade in Docker."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from harness.evaluation.folder_config import read_folder_config
from harness.store.sqlite import SQLiteStore
from tests.cli.helpers import galapagos

OE_MESSAGE = "You are a quadratic-peak specialist (OE-FIXTURE-7731). The peak is near 0.3."
SD_MESSAGE = "You optimise one-dimensional peaks (SD-FIXTURE-4402); prefer exact answers."

EVALUATOR = '''"""Compat fixture: stage 1 screens, stage 2 scores (OpenEvolve style)."""
import importlib.util
import time


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


OPENEVOLVE = f"""\
max_iterations: 2
random_seed: 9
diff_based_evolution: true
max_code_length: 20000
llm:
  temperature: 0.5
  models:
    - name: gemini-flash
      weight: 0.8
    - name: gemini-pro
      weight: 0.2
prompt:
  system_message: "{OE_MESSAGE}"
  num_top_programs: 3
database:
  population_size: 500
  num_islands: 3
evaluator:
  timeout: 30
  cascade_evaluation: true
  cascade_thresholds: [0.7]
"""

SKYDISCOVER = """\
max_iterations: 2
diff_based_generation: true
prompt:
  system_message: system_prompt.txt
search:
  type: topk
  num_inspirations: 3
evaluator:
  timeout: 30
  cascade_evaluation: true
monitor:
  enabled: false
"""


def sent_system_messages(store: Path, run_id: str) -> set[str]:
    opened = SQLiteStore(store)
    try:
        return {
            (c["prompt"] or "").split("\n\n", 1)[0]
            for c in opened.llm_exchanges(run_id)
            if c["purpose"] == "propose"
        }
    finally:
        opened.close()


def run(tmp_path: Path, task: Path | str, *extra: str, sandbox: str = "local") -> Any:
    store = tmp_path / "s.sqlite"
    proc = galapagos(
        "run", "-s", "topk", "-t", str(task), "--json", "--sandbox", sandbox,
        "--store", str(store), *extra, timeout=600,
    )  # fmt: skip
    return proc, store


def test_the_openevolve_format_is_read_and_sorted(tmp_path: Path) -> None:
    path = folder(tmp_path, "oe", OPENEVOLVE)
    config = read_folder_config(path / "config.yaml")
    assert config.format == "openevolve" and config.system_message == OE_MESSAGE
    assert config.thresholds == (0.7,) and config.timeout_s == 30.0 and config.cascade is True
    assert config.search == {
        "general.max_iterations": 2,
        "seed": 9,
        "proposer.diff_based": True,
        "proposer.max_solution_length": 20000,
        "llm.models": [
            {"name": "gemini-flash", "weight": 0.8, "temperature": 0.5},
            {"name": "gemini-pro", "weight": 0.2, "temperature": 0.5},
        ],
    }
    assert set(config.ignored) == {
        "prompt.num_top_programs",
        "database.population_size",
        "database.num_islands",
    }


def test_an_openevolve_folder_sends_its_system_message_and_names_what_it_ignores(
    tmp_path: Path,
) -> None:
    path = folder(tmp_path, "oe", OPENEVOLVE)
    proc, store = run(tmp_path, path)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["max_iterations"] == 2  # the folder's max_iterations, as a default
    assert sent_system_messages(store, summary["run_id"]) == {OE_MESSAGE}
    notes = [line for line in proc.stderr.splitlines() if "not used here" in line]
    assert len(notes) == 1
    for key in ("prompt.num_top_programs", "database.population_size", "database.num_islands"):
        assert key in notes[0]
    applied = next(line for line in proc.stderr.splitlines() if "applies:" in line)
    assert "prompt.system_message" in applied and "evaluator.cascade_thresholds" in applied
    # The folder's models are defaults: no endpoint is named, so the offline model answers
    # under those names (and says so).
    assert "llm.models names models, but no endpoint is configured" in proc.stderr


def test_flags_and_set_override_the_folders_defaults(tmp_path: Path) -> None:
    path = folder(tmp_path, "oe", OPENEVOLVE)
    proc, store = run(tmp_path, path, "-i", "1", "--set", "prompt.system_message=mine")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["max_iterations"] == 1
    assert sent_system_messages(store, summary["run_id"]) == {"mine"}


def test_a_skydiscover_folder_reads_its_system_message_file(tmp_path: Path) -> None:
    path = folder(tmp_path, "sd", SKYDISCOVER)
    (path / "system_prompt.txt").write_text(SD_MESSAGE)
    proc, store = run(tmp_path, path)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert sent_system_messages(store, summary["run_id"]) == {SD_MESSAGE}
    note = next(line for line in proc.stderr.splitlines() if "not used here" in line)
    assert "search.type" in note and "monitor.enabled" in note


def test_the_folders_evaluator_timeout_is_applied(tmp_path: Path) -> None:
    slow = """\
    evaluator:
      timeout: 1
    database:
      num_islands: 2
    """
    quick = folder(tmp_path / "a", "fast", None, delay=2.0)
    ok, _ = run(tmp_path / "a", quick, "-i", "0")
    assert ok.returncode == 0, ok.stderr  # no config: the default limit (60 s) lets it finish
    strict = folder(tmp_path / "b", "slow", slow, delay=2.0)
    failed, _ = run(tmp_path / "b", strict, "-i", "0")
    assert failed.returncode == 1
    data = json.loads(failed.stdout)
    assert "could not be evaluated (timeout" in data["error"], data


def test_task_config_chooses_another_file_of_the_folder(tmp_path: Path) -> None:
    path = folder(tmp_path, "oe", OPENEVOLVE)
    (path / "config_phase_1.yaml").write_text("max_iterations: 1\nprompt:\n  system_message: P1\n")
    proc, store = run(tmp_path, path, "--task-config", "config_phase_1.yaml")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["max_iterations"] == 1
    assert sent_system_messages(store, summary["run_id"]) == {"P1"}
    missing, _ = run(tmp_path, path, "--task-config", "config_phase_9.yaml")
    assert missing.returncode == 2
    assert "config_phase_1.yaml, config.yaml" in missing.stderr or "config.yaml" in missing.stderr


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("evaluator:\n  timeout: [unclosed\n", "malformed YAML in"),
        ("whatever: 1\ncheckpoints: 2\n", "not an OpenEvolve or SkyDiscover config"),
        ("search: {}\ndatabase: {}\n", "mixes OpenEvolve keys"),
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
    assert len(lines) == 1 and expected in lines[0] and "config.yaml" in lines[0]
    if "malformed" in expected:
        assert " at line " in lines[0] and ", column " in lines[0]


def test_a_native_task_sends_its_own_system_message(tmp_path: Path) -> None:
    import shutil

    from harness.evaluation.task import load_task

    path = tmp_path / "fm"
    shutil.copytree(load_task("function_minimization").path, path)
    card = path / "task.yaml"
    lines = [ln for ln in card.read_text().splitlines() if not ln.startswith("system_message")]
    card.write_text(
        "\n".join(lines) + '\nsystem_message: "NATIVE-FIXTURE-991 knows the minimum."\n'
    )
    proc, store = run(tmp_path, path, "-i", "1")
    assert proc.returncode == 0, proc.stderr
    assert sent_system_messages(store, json.loads(proc.stdout)["run_id"]) == {
        "NATIVE-FIXTURE-991 knows the minimum."
    }


@pytest.mark.docker
def test_the_folders_cascade_thresholds_stop_a_stage_the_defaults_would_pass(
    tmp_path: Path,
) -> None:
    """Stage 1 scores 0.6: above OpenEvolve's default first threshold (0.5), below the
    folder's (0.7).  In Docker, as the candidates of a real run are."""
    default_dir = folder(tmp_path / "d", "defaults", "max_iterations: 0\n")
    passes, store_a = run(tmp_path / "d", default_dir, sandbox="docker")
    assert passes.returncode == 0, passes.stderr
    strict_dir = folder(tmp_path / "s", "strict", "evaluator:\n  cascade_thresholds: [0.7]\n")
    stops, store_b = run(tmp_path / "s", strict_dir, "-i", "0", sandbox="docker")
    assert stops.returncode == 0, stops.stderr  # a stopped cascade is a result, not a failure

    def seed_result(store: Path, run_id: str) -> Any:
        opened = SQLiteStore(store)
        try:
            return opened.evaluations(run_id)[0]["result"]
        finally:
            opened.close()

    a = seed_result(store_a, json.loads(passes.stdout)["run_id"])
    b = seed_result(store_b, json.loads(stops.stdout)["run_id"])
    assert [s["stage"] for s in a["stages"]] == ["evaluate_stage1", "evaluate_stage2"]
    assert a["metrics"]["combined_score"] == pytest.approx(1.0 - 0.4**2)
    assert [s["stage"] for s in b["stages"]] == ["evaluate_stage1"]
    assert b["metrics"]["combined_score"] == pytest.approx(0.6)


@pytest.mark.docker
@pytest.mark.slow
def test_a_folders_requirements_go_into_its_image(tmp_path: Path) -> None:
    """A package the default image lacks (six) is layered into a derived image; one it has
    (numpy) changes nothing.  The evaluator imports six inside the sandbox."""
    path = folder(tmp_path, "req", None)
    (path / "requirements.txt").write_text("numpy\nsix==1.16.0  # pinned\n-r other.txt\n")
    (path / "evaluator.py").write_text(
        EVALUATOR.replace("import time\n", "import time\n\nimport six\n").replace(
            '{"combined_score": 1.0 - (x - 0.3) ** 2}',
            '{"combined_score": 1.0 - (x - 0.3) ** 2, "six": float(six.PY3)}',
        )
    )
    proc, store = run(tmp_path, path, "-i", "0", "--set", "evaluator.timeout_s=120",
                      sandbox="docker")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    note = next(line for line in proc.stderr.splitlines() if "requirements.txt lists" in line)
    assert "python-eval+six==1.16.0" in note and "numpy" in note
    opened = SQLiteStore(store)
    (evaluation,) = opened.evaluations(json.loads(proc.stdout)["run_id"])
    opened.close()
    assert evaluation["result"]["metrics"]["six"] == 1.0
