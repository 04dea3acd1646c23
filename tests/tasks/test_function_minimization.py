"""function_minimization: the known minimiser scores 1, the reported value is ignored."""

from __future__ import annotations

import math

import pytest

from harness.core.scoring import is_failure
from harness.evaluation.task import load_task

from .conftest import load_evaluator, run_stage

fm = load_evaluator("function_minimization")


def test_known_minimiser_scores_one() -> None:
    metrics = fm.score_point(*fm.X_STAR)
    assert metrics["value"] == pytest.approx(-1.5186858408, abs=1e-9)
    assert metrics["combined_score"] == pytest.approx(1.0, abs=1e-12)
    assert metrics["distance"] == 0.0


def test_no_point_scores_above_one_on_a_fine_grid() -> None:
    # The recorded minimum is the minimum: f on a 401 x 401 grid never goes below it.
    grid = [-5 + i * 0.025 for i in range(401)]
    assert min(fm.f(x, y) for x in grid for y in grid) >= fm.F_STAR


def test_reported_value_is_ignored() -> None:
    task = load_task("function_minimization")
    lie = "def run_search():\n    return 3.0, -2.0, -100.0\n"
    metrics = run_stage(task, fm, lie, "evaluate_stage2")
    assert metrics["value"] == pytest.approx(fm.f(3.0, -2.0))


@pytest.mark.parametrize(
    "point",
    [(math.nan, 0.0), (0.0, math.inf), (6.0, 0.0), ("1", 0.0), (True, 0.0), (None, 1.0)],
    ids=["nan", "inf", "outside", "string", "bool", "none"],
)
def test_invalid_points(point) -> None:
    assert is_failure(fm.score_point(*point))


def test_stage1_screens_the_shape_of_the_answer() -> None:
    task = load_task("function_minimization")
    metrics = run_stage(task, fm, "def run_search():\n    return [1.0]\n", "evaluate_stage1")
    assert is_failure(metrics) and "must return" in metrics["error"]
