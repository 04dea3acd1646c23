"""Cascade driver: OpenEvolve stage semantics (fake backend) and real containers end to end."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from harness.core.records import EvalResult
from harness.core.scoring import is_failure
from harness.evaluation.driver import TaskEvaluator, stage_score
from harness.evaluation.task import load_task
from harness.sandbox.jobs import failure_result
from harness.sandbox.protocol import Job


class ScriptedBackend:
    """Answers each stage function with a prepared result and records the jobs."""

    name = "scripted"

    def __init__(self, results: dict[str, EvalResult]) -> None:
        self.results = results
        self.jobs: list[Job] = []
        self.closed = False

    async def run(self, job: Job) -> EvalResult:
        self.jobs.append(job)
        return self.results[job.function]

    async def aclose(self) -> None:
        self.closed = True


def write_task(folder: Path, cascade: str, mode: str = "sealed") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    extra = "entry_point: solve\n" if mode == "sealed" else ""
    (folder / "task.yaml").write_text(
        f"name: t\ndescription: d\nobjective: o\nmode: {mode}\n{extra}{cascade}"
        "limits: {wall_s: 5, memory_mb: 192, tmpfs_mb: 16}\n"
    )
    (folder / "evaluator.py").write_text("def evaluate_stage1(c): pass\n")
    (folder / "initial_program.py").write_text("def solve():\n    return 1\n")
    return folder


CASCADE = (
    "cascade:\n  - {function: evaluate_stage1, threshold: 0.5}\n  - {function: evaluate_stage2}\n"
)


def ok(**metrics: object) -> EvalResult:
    return EvalResult(status="ok", metrics=metrics, duration_s=1.0)


async def test_stages_merge_numeric_metrics_and_later_stages_win(tmp_path: Path) -> None:
    backend = ScriptedBackend(
        {
            "evaluate_stage1": ok(combined_score=0.6, quick=True, error="", note="s1"),
            "evaluate_stage2": ok(combined_score=0.9, full=2),
        }
    )
    evaluator = TaskEvaluator(load_task(write_task(tmp_path, CASCADE)), backend, run_id="r1")
    result = await evaluator.evaluate("code", program_id="p", iteration=3)
    assert result.status == "ok" and result.failed_stage is None
    assert result.metrics == {"combined_score": 0.9, "quick": 1.0, "full": 2}
    assert result.artifacts["note"] == "s1" and result.duration_s == 2.0
    assert [s["stage"] for s in result.stages] == ["evaluate_stage1", "evaluate_stage2"]
    assert all(s["passed"] for s in result.stages)
    labels = backend.jobs[1].labels
    assert labels["galapagos.run"] == "r1" and labels["galapagos.program"] == "p"
    assert labels["galapagos.stage"] == "evaluate_stage2"
    await evaluator.aclose()
    assert backend.closed


async def test_a_score_below_the_threshold_stops_the_cascade_as_a_valid_result(
    tmp_path: Path,
) -> None:
    backend = ScriptedBackend({"evaluate_stage1": ok(a=0.2, b=0.4, error=0.0)})
    evaluator = TaskEvaluator(load_task(write_task(tmp_path, CASCADE)), backend)
    result = await evaluator.evaluate("code", program_id="p", iteration=1)
    assert len(backend.jobs) == 1
    assert result.status == "ok" and not is_failure(result.metrics, result.artifacts)
    assert result.failed_stage == "evaluate_stage1"
    # Nothing for the prompt to show (the references label no threshold stop); the stage says.
    assert "failure_stage" not in result.artifacts and "cascade_stop" not in result.artifacts
    assert "below its threshold" in result.stages[0]["stopped"]
    assert result.stages[0]["score"] == pytest.approx(0.3) and not result.stages[0]["passed"]


@pytest.mark.parametrize("status", ["timeout", "crash", "oom", "output_limit", "invalid_result"])
async def test_a_failed_stage_fails_the_whole_result(tmp_path: Path, status: str) -> None:
    backend = ScriptedBackend(
        {
            "evaluate_stage1": ok(combined_score=0.8, validity=1.0),
            "evaluate_stage2": failure_result(status, "it broke", stderr_tail="tail"),  # type: ignore[arg-type]
        }
    )
    evaluator = TaskEvaluator(load_task(write_task(tmp_path, CASCADE)), backend)
    result = await evaluator.evaluate("code", program_id="p", iteration=1)
    assert result.status == status and result.failed_stage == "evaluate_stage2"
    assert is_failure(result.metrics, result.artifacts)
    assert result.metrics["combined_score"] == 0.0 and result.metrics["validity"] == 0.0
    assert result.artifacts["error"] == "it broke" and result.stderr_tail == "tail"
    assert result.artifacts["failure_stage"] == "evaluate_stage2"
    assert (result.metrics.get("timeout") is True) == (status == "timeout")


async def test_an_evaluator_reported_failure_is_invalid(tmp_path: Path) -> None:
    backend = ScriptedBackend({"evaluate_stage1": ok(combined_score=0.0, error="overlap")})
    evaluator = TaskEvaluator(load_task(write_task(tmp_path, CASCADE)), backend)
    result = await evaluator.evaluate("code", program_id="p", iteration=1)
    assert result.status == "invalid" and result.artifacts["error"] == "overlap"
    assert is_failure(result.metrics, result.artifacts)


def test_stage_score_prefers_combined_score_and_ignores_error() -> None:
    assert stage_score({"combined_score": 0.1, "x": 5}) == 0.1
    assert stage_score({"x": 1, "y": 0, "error": 100, "ok": True}) == 0.5
    assert stage_score({}) == 0.0


SEALED_EVALUATOR = textwrap.dedent("""
    import json, os
    from galapagos_sandbox import CandidateError

    def _target():
        with open(os.path.join(os.path.dirname(__file__), "data.json")) as f:
            return json.load(f)["target"]

    def evaluate_stage1(candidate):
        return {"combined_score": 1.0 if candidate.call("solve") is not None else 0.0}

    def evaluate_stage2(candidate):
        value = candidate.call("solve")
        return {"combined_score": 1.0 / (1.0 + abs(value - _target())), "value": value}
""")


@pytest.mark.docker
async def test_a_sealed_cascade_runs_each_stage_in_its_own_container(
    tmp_path: Path, docker_backend: object
) -> None:
    folder = write_task(
        tmp_path, CASCADE.replace("evaluate_stage2}", "evaluate_stage2}\nfiles: [data.json]")
    )
    (folder / "evaluator.py").write_text(SEALED_EVALUATOR)
    (folder / "data.json").write_text('{"target": 3}')
    evaluator = TaskEvaluator(load_task(folder), docker_backend, close_backend=False)
    before = len(docker_backend.history)
    result = await evaluator.evaluate("def solve():\n    return 2\n", program_id="p", iteration=1)
    assert result.status == "ok", result.error
    assert result.metrics == {"combined_score": 0.5, "value": 2}
    assert len(docker_backend.history) - before == 2  # two stages, two fresh containers
    crashed = await evaluator.evaluate(
        "def solve():\n    raise SystemExit(0)\n", program_id="q", iteration=2
    )
    assert crashed.status == "crash" and crashed.failed_stage == "evaluate_stage1"
    assert is_failure(crashed.metrics, crashed.artifacts)


COMPAT_EVALUATOR = textwrap.dedent("""
    import importlib.util
    from openevolve.evaluation_result import EvaluationResult
    from skydiscover.evaluation import EvaluationResult as SkyResult
    from helper import target

    def _load(path):
        spec = importlib.util.spec_from_file_location("program", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    def evaluate_stage1(program_path):
        _load(program_path)
        return {"combined_score": 0.6, "compiled": True}

    def evaluate_stage2(program_path):
        value = _load(program_path).solve()
        assert SkyResult is EvaluationResult
        return EvaluationResult(metrics={"combined_score": 1.0 / (1 + abs(value - target))},
                                artifacts={"value": str(value)})
""")


@pytest.mark.docker
async def test_an_openevolve_folder_runs_unchanged_in_compat_mode(
    tmp_path: Path, docker_backend: object
) -> None:
    folder = tmp_path / "oe_task"
    folder.mkdir()
    (folder / "evaluator.py").write_text(COMPAT_EVALUATOR)
    (folder / "helper.py").write_text("target = 4\n")
    (folder / "initial_program.py").write_text("def solve():\n    return 1\n")
    task = load_task(folder)
    assert task.card.mode == "compat"
    evaluator = TaskEvaluator(task, docker_backend, close_backend=False)
    result = await evaluator.evaluate("def solve():\n    return 3\n", program_id="p", iteration=1)
    assert result.status == "ok", result.error
    assert result.metrics == {"combined_score": 0.5, "compiled": 1.0}
    assert result.artifacts["value"] == "3"
    broken = await evaluator.evaluate("def solve(:\n", program_id="q", iteration=2)
    assert broken.status == "crash" and "SyntaxError" in broken.error
