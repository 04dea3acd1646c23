"""``galapagos task check``: the variant generator, the static checks, and whole checks through
the real sandbox runner (``local`` backend here; ``docker`` in test_check_docker.py)."""

from __future__ import annotations

import asyncio
import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.core.records import EvalResult
from harness.core.scoring import is_failure
from harness.evaluation.check import (
    VARIANTS,
    CheckReport,
    check_task,
    infer_entry_point,
    lying_source,
    variant_source,
)
from harness.evaluation.check._variants import (
    ABSENT_PART_MARKER,
    NO_REPORTED_VALUE_MARKER,
    PARTIAL_NAN_VARIANTS,
)
from harness.evaluation.task import Task, load_task
from harness.sandbox.protocol import Job

from .conftest import FIXTURES, TASKS_DIR

SEED = "import numpy as np\n\ndef solve():\n    return np.array([1.0, 2.0]), 3.0\n"


def _run(source: str, entry: str = "solve") -> Any:
    from galapagos_sandbox.testing import InProcessCandidate

    return InProcessCandidate(source).call(entry)


# ---- the generated variants ------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(set(VARIANTS) - {"syntax_error"}))
def test_every_variant_compiles(kind: str) -> None:
    compile(variant_source(SEED, "solve", kind, task_files={"evaluator.py": b""}), "v", "exec")


def test_syntax_error_variant_does_not_compile() -> None:
    with pytest.raises(SyntaxError):
        compile(variant_source(SEED, "solve", "syntax_error"), "v", "exec")


def test_nan_variant_poisons_arrays_and_scalars() -> None:
    arr, scalar = _run(variant_source(SEED, "solve", "returns_nan"))
    assert arr.shape == (2,) and all(math.isnan(v) for v in arr) and math.isnan(scalar)


def test_wrong_shape_variant_adds_an_axis() -> None:
    arr, scalar = _run(variant_source(SEED, "solve", "wrong_shape"))
    assert arr.shape == (2, 1) and scalar == [3.0, 3.0]


def test_lying_variant_inflates_scalars_only() -> None:
    arr, scalar = _run(lying_source(SEED, "solve", "maximize"))
    assert arr.tolist() == [1.0, 2.0] and scalar > 3.0
    _, low = _run(lying_source(SEED, "solve", "minimize"))
    assert low < 3.0


def test_partial_nan_variants_poison_one_part_each(capfd) -> None:
    seed = (
        "import numpy as np\n\n"
        "def solve():\n    return np.array([1, 2]), {'r': [3.0, [4.0]]}, 5.0\n"
    )
    arr, parts, scalar = _run(variant_source(seed, "solve", "nan_in_part_1"))
    assert math.isnan(arr[0]) and arr[1] == 2.0 and parts == {"r": [3.0, [4.0]]} and scalar == 5.0
    arr, parts, scalar = _run(variant_source(seed, "solve", "nan_in_part_2"))
    assert arr.tolist() == [1, 2] and math.isnan(parts["r"][0]) and parts["r"][1] == [4.0]
    assert ABSENT_PART_MARKER not in capfd.readouterr().err
    # No third part: the answer comes back intact, and the variant says so.
    assert _run(variant_source(seed, "solve", "nan_in_part_3"))[2] == 5.0
    assert ABSENT_PART_MARKER in capfd.readouterr().err


def test_small_lies_move_only_a_trailing_reported_value(capfd) -> None:
    arr, value = _run(lying_source(SEED, "solve", "maximize", 1e-6))
    assert arr.tolist() == [1.0, 2.0] and value == pytest.approx(3.0 + 3e-6, rel=1e-12)
    assert _run(lying_source(SEED, "solve", "minimize", 1e-3))[1] == pytest.approx(2.997)
    assert NO_REPORTED_VALUE_MARKER not in capfd.readouterr().err
    lone = "def solve():\n    return 0.5\n"
    assert _run(lying_source(lone, "solve", "maximize", 1e-3)) == 0.5
    assert NO_REPORTED_VALUE_MARKER in capfd.readouterr().err


def test_variants_wrap_entry_points_that_take_arguments() -> None:
    seed = "def priority(item, bins):\n    return [b - item for b in bins]\n"
    source = variant_source(seed, "priority", "returns_inf")
    from galapagos_sandbox.testing import InProcessCandidate

    assert InProcessCandidate(source).call("priority", 1.0, [2.0, 3.0]) == [math.inf, math.inf]


def test_unknown_variant_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown variant"):
        variant_source(SEED, "solve", "nope")


# ---- static checks ---------------------------------------------------------------------------


def _copy_task(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    shutil.copytree(TASKS_DIR / name, folder)
    return folder


async def _static(folder: Path) -> CheckReport:
    """Only the static checks run: the backend is never reached when they fail."""
    return await check_task(folder, backend=None)  # type: ignore[arg-type]


async def test_missing_entry_point_fails_the_files_check(tmp_path: Path) -> None:
    folder = _copy_task(tmp_path, "heilbronn_triangle")
    seed = folder / "initial_program.py"
    seed.write_text(seed.read_text().replace("def heilbronn_triangle11", "def other_name"))
    report = await _static(folder)
    files = next(c for c in report.checks if c.name == "files")
    assert files.status == "fail" and "heilbronn_triangle11" in files.detail
    assert not report.ok
    assert [c.status for c in report.checks if c.name == "seed_evaluates"] == ["skip"]


async def test_missing_cascade_function_fails_the_files_check(tmp_path: Path) -> None:
    folder = _copy_task(tmp_path, "function_minimization")
    ev = folder / "evaluator.py"
    ev.write_text(ev.read_text().replace("def evaluate_stage2", "def evaluate_second"))
    files = next(c for c in (await _static(folder)).checks if c.name == "files")
    assert files.status == "fail" and "evaluate_stage2" in files.detail


async def test_unbalanced_markers_fail_the_files_check(tmp_path: Path) -> None:
    folder = _copy_task(tmp_path, "heilbronn_triangle")
    seed = folder / "initial_program.py"
    seed.write_text(seed.read_text().replace("# EVOLVE-BLOCK-END", "# end of block"))
    files = next(c for c in (await _static(folder)).checks if c.name == "files")
    assert files.status == "fail" and "EVOLVE-BLOCK" in files.detail


def test_card_without_best_known_source_fails_the_card_check(tmp_path: Path) -> None:
    from harness.evaluation.check._static import card_check

    folder = _copy_task(tmp_path, "heilbronn_triangle")
    card = folder / "task.yaml"
    card.write_text(card.read_text().replace("metric: min_area_normalized\n", ""))
    check = card_check(load_task(folder))
    assert check.status == "fail" and "metric" in check.detail


def test_compat_entry_point_is_inferred_from_the_evaluator() -> None:
    assert infer_entry_point(load_task(FIXTURES / "compat_task")) == "solve"


# ---- scheduling and verdicts, through the evaluator seam (no sandbox) ------------------------


HANGING = {"infinite_loop", "sleeps_past_budget"}


class _FakeSandbox:
    """Evaluator factory and backend in one: scores by a rule and records what it was asked.

    The seed scores ``seed_status`` (0.5 when ok); every other program is rejected.  The probe
    (the one job that bypasses the evaluators) reports ``scalars`` scalars.
    """

    name = "fake"

    def __init__(self, task: Task, *, seed_status: str = "ok", scalars: int = 1) -> None:
        self.seed = task.initial_program
        self.seed_status = seed_status
        self.scalars = scalars
        self.started: list[str] = []
        self.running: set[str] = set()
        self.most_running = 0  # of the battery, the hanging variants aside
        self.most_running_overall = 0

    def factory(self, task: Task, backend: object) -> _FakeSandbox:
        return self

    async def evaluate(self, code: str, *, program_id: str, iteration: int) -> EvalResult:
        label = program_id.removeprefix("check-")
        self.started.append(label)
        self.running.add(label)
        self.most_running = max(self.most_running, len(self.running - HANGING))
        self.most_running_overall = max(self.most_running_overall, len(self.running))
        await asyncio.sleep(0.01)
        self.running.discard(label)
        if code == self.seed and self.seed_status == "ok":
            return EvalResult("ok", {"combined_score": 0.5, "validity": 1.0, "value": 2.0})
        if code == self.seed:
            return EvalResult("crash", {"combined_score": 0.0, "validity": 0.0})
        return EvalResult("invalid", {"combined_score": 0.0, "validity": 0.0, "error": "no"})

    async def run(self, job: Job) -> EvalResult:
        self.started.append("probe")
        return EvalResult("ok", {"combined_score": 0.0, "scalars": self.scalars})

    async def aclose(self) -> None:
        pass


async def _fake_check(sandbox: _FakeSandbox, task: Task) -> CheckReport:
    return await check_task(
        task,
        sandbox,
        runs=2,
        concurrency=2,
        evaluator_factory=sandbox.factory,
    )


async def test_hanging_variants_start_before_the_rest() -> None:
    """They last their whole budget whatever the load: started first (and outside the limit),
    they overlap the battery."""
    task = load_task("function_minimization")
    sandbox = _FakeSandbox(task)
    report = await _fake_check(sandbox, task)
    assert report.ok, [c for c in report.checks if c.status == "fail"]
    assert set(sandbox.started[:2]) == HANGING
    # ... outside the concurrency limit, which still holds for everything else.
    assert sandbox.most_running == 2 and sandbox.most_running_overall == 4
    # The report keeps its documented order whatever order the jobs ran in.
    names = [c.name for c in report.checks]
    assert names[:5] == ["card", "files", "hidden_data", "seed_evaluates", "deterministic"]
    assert names[5:-1] == [f"rejects_{k}" for k in VARIANTS]
    assert names[-1] == "recomputes_reported"


async def test_lying_variant_runs_only_when_the_probe_finds_a_reported_scalar() -> None:
    task = load_task("function_minimization")
    found = _FakeSandbox(task, scalars=2)
    lying = next(
        c for c in (await _fake_check(found, task)).checks if c.name == "recomputes_reported"
    )
    assert lying.status == "pass" and lying.data["scalars"] == 2
    lies = [label for label in found.started if label.startswith("lying-")]
    assert lies == ["lying-gross", "lying-1e-09", "lying-1e-06", "lying-0.001"]
    assert found.started.index("lying-gross") > found.started.index("probe")

    arrays_only = _FakeSandbox(task, scalars=0)
    report = await _fake_check(arrays_only, task)
    lying = next(c for c in report.checks if c.name == "recomputes_reported")
    assert lying.status == "skip" and "returns only arrays" in lying.detail
    assert not [label for label in arrays_only.started if label.startswith("lying-")]


async def test_failing_seed_skips_every_check_that_compares_with_it() -> None:
    task = load_task("function_minimization")
    report = await _fake_check(_FakeSandbox(task, seed_status="crash"), task)
    status = _status(report)
    assert status["seed_evaluates"] == "fail" and not report.ok
    later = [
        c for c in report.checks if c.name not in ("card", "files", "hidden_data", "seed_evaluates")
    ]
    assert len(later) == len(VARIANTS) + 2
    assert all(c.status == "skip" and "does not evaluate" in c.detail for c in later)


# ---- whole checks through the real runner (local backend) ------------------------------------


@pytest.fixture
async def local_backend():
    from harness.sandbox.local_backend import LocalBackend

    backend = LocalBackend()
    yield backend
    await backend.aclose()


def _status(report: CheckReport) -> dict[str, str]:
    return {c.name: c.status for c in report.checks}


@pytest.mark.slow
async def test_weak_evaluator_fails_naming_the_checks(local_backend) -> None:
    report = await check_task(FIXTURES / "weak_task", local_backend, runs=2)
    status = _status(report)
    assert not report.ok
    assert status["rejects_returns_nan"] == "fail"
    assert status["recomputes_reported"] == "fail"
    failed = {c.name: c.detail for c in report.checks if c.status == "fail"}
    assert set(failed) == {"rejects_returns_nan", "recomputes_reported"}
    assert "trusts a value the program reports" in failed["recomputes_reported"]
    # The other broken candidates are still caught (by the sandbox or the evaluator).
    assert status["rejects_infinite_loop"] == "pass" and status["rejects_lying_object"] == "pass"


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["tuple", "list"])
async def test_a_point_answer_passes_as_a_tuple_and_as_a_list(
    local_backend, shape: str, tmp_path: Path
) -> None:
    """An honest evaluator of ``(x, y)`` is not blamed for the point's last coordinate."""
    folder = tmp_path / "point_task"
    shutil.copytree(FIXTURES / "point_task", folder)
    if shape == "list":
        program = folder / "initial_program.py"
        program.write_text(program.read_text().replace("return X, Y", "return [X, Y]"))
    report = await check_task(folder, local_backend, runs=2)
    status = _status(report)
    assert status["recomputes_reported"] == "pass", report.checks
    assert "n/a" in next(c.detail for c in report.checks if c.name == "recomputes_reported")
    assert report.ok, [c for c in report.checks if c.status == "fail"]


@pytest.mark.slow
async def test_shipped_task_passes_on_the_local_backend(local_backend) -> None:
    report = await check_task("function_minimization", local_backend, runs=2)
    assert report.ok, [c for c in report.checks if c.status == "fail"]
    status = _status(report)
    # The unsafe backend cannot show isolation: those checks are skipped, never passed.
    assert status["rejects_reads_task_files"] == "skip"
    assert status["rejects_forges_runner_output"] == "skip"
    assert status["recomputes_reported"] == "pass"
    # Its answer (x, y, value) holds no list or array to poison with a single NaN.
    partial = {f"rejects_{k}" for k in PARTIAL_NAN_VARIANTS}
    assert {status[name] for name in partial} == {"skip"}
    assert report.count("pass") == len(report.checks) - 2 - len(partial)


@pytest.mark.slow
async def test_compat_folder_reports_what_it_cannot_check(local_backend) -> None:
    report = await check_task(FIXTURES / "compat_task", local_backend, runs=2)
    skipped = {c.name: c.detail for c in report.checks if c.status == "skip"}
    assert "synthesised" in skipped["card"]
    assert "compat mode" in skipped["rejects_reads_task_files"]
    partial = {f"rejects_{k}" for k in PARTIAL_NAN_VARIANTS}  # its answer is one number
    assert set(skipped) == {
        "card",
        "folder_config",  # the fixture has no config.yaml
        "rejects_reads_task_files",
        "rejects_forges_runner_output",
        *partial,
    }
    assert "no config.yaml" in skipped["folder_config"]
    assert report.to_dict()["summary"]["skip"] == 4 + len(partial)
    # A well-behaved OpenEvolve-style evaluator passes every check that applies to it.
    assert report.ok, [c for c in report.checks if c.status == "fail"]


# ---- the CLI ---------------------------------------------------------------------------------

runner = CliRunner()


def _cli(*args: str):
    return runner.invoke(app, ["task", "check", *args])


@pytest.mark.slow
def test_cli_fails_the_weak_task_with_exit_1_naming_the_checks() -> None:
    result = _cli(str(FIXTURES / "weak_task"), "--sandbox", "local")
    assert result.exit_code == 1, result.output
    assert "rejects_returns_nan" in result.stderr and "recomputes_reported" in result.stderr


@pytest.mark.slow
def test_cli_json_report_on_stdout() -> None:
    result = _cli("function_minimization", "--sandbox", "local", "--json", "--runs", "2")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["ok"] is True and report["summary"]["fail"] == 0
    assert {c["name"] for c in report["checks"]} >= {"card", "seed_evaluates", "deterministic"}


def test_cli_bad_folder_is_exit_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["task", "check", str(tmp_path), "--sandbox", "local"])
    assert result.exit_code == 2
    assert "not a task folder" in result.stderr


def test_failing_variant_reports_are_failures_by_the_predicate() -> None:
    # The predicate task check applies: what a failed job looks like never counts as success.
    assert is_failure({"combined_score": 0.0, "validity": 0.0, "error": "x"})


async def test_file_probe_detects_a_backend_that_exposes_task_files(local_backend) -> None:
    """The probe has teeth: on the unisolated local backend it finds and reads a trusted task
    file (the runner writes data files to disk; the evaluator module itself runs from memory),
    and the check would fail (which is why that check is skipped there)."""
    from harness.evaluation.check._verdicts import variant_check
    from harness.evaluation.driver import TaskEvaluator

    task = load_task(Path(__file__).parents[1] / "redteam" / "fixtures" / "knapsack")
    assert task.initial_program is not None and task.card.entry_point
    code = variant_source(
        task.initial_program, task.card.entry_point, "reads_task_files", task_files=task.files
    )
    evaluator = TaskEvaluator(task, local_backend, close_backend=False)
    result = await evaluator.evaluate(code, program_id="probe", iteration=0)
    assert result.status == "ok" and not is_failure(result.metrics)
    check = variant_check("reads_task_files", result, seed_score=0.0)
    assert check.status == "fail" and (
        "items.json" in check.detail or "reference.json" in check.detail
    )


@pytest.mark.slow
async def test_weak_array_evaluator_fails_on_one_nan_and_on_a_small_lie(local_backend) -> None:
    """NaN everywhere and a gross lie are caught by this evaluator; one NaN centre and a lie
    within its "close enough" tolerance are not, and the check names both."""
    report = await check_task(FIXTURES / "weak_arrays_task", local_backend, runs=2)
    status = _status(report)
    failed = {c.name: c.detail for c in report.checks if c.status == "fail"}
    assert set(failed) == {"rejects_nan_in_part_1", "recomputes_reported"}, failed
    assert status["rejects_returns_nan"] == "pass"
    assert status["rejects_nan_in_part_2"] == "pass"  # a NaN radius is caught
    assert status["rejects_nan_in_part_3"] == "skip"  # (centres, radii, sum): two arrays
    assert "scored as a success" in failed["rejects_nan_in_part_1"]
    assert "last value by 1e-09" in failed["recomputes_reported"]
    # The gross lie alone would have passed it: outside the tolerance, it is recomputed.
    lies = next(c for c in report.checks if c.name == "recomputes_reported").data["lies"]
    assert lies["gross"]["metrics"]["combined_score"] == pytest.approx(0.3 / 0.5)


def test_card_check_quotes_the_source_whole_or_cut_at_a_word_with_an_ellipsis(
    tmp_path: Path,
) -> None:
    from harness.evaluation.check._static import card_check

    short = card_check(load_task(TASKS_DIR / "function_minimization"))
    assert short.detail.endswith("computed with 3000-start L-BFGS-B (docs/tasks.md)")

    folder = _copy_task(tmp_path, "function_minimization")
    card = folder / "task.yaml"
    long_source = "computed by a long multistart search over many seeds " * 4 + "(papers.md §7)"
    text = card.read_text()
    old = next(ln for ln in text.splitlines() if ln.startswith("  source:"))
    card.write_text(text.replace(old, f"  source: {long_source}"))
    detail = card_check(load_task(folder)).detail
    quoted = detail.split("from: ", 1)[1]
    assert quoted.endswith(" …") and len(quoted) <= 120
    assert long_source.startswith(quoted[: -len(" …")] + " ")
    assert card_check(load_task(folder)).data["best_known_source"] == long_source
