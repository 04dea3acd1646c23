"""heilbronn_triangle, heilbronn_convex, minmax_distance_2d/3d: exact values and invalid sets."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from harness.core.scoring import is_failure
from harness.evaluation.task import load_task

from .conftest import load_evaluator
from .constructions import MINMAX_2D_16, MINMAX_2D_16_RATIO2, MINMAX_3D_14, MINMAX_3D_14_RATIO2

tri = load_evaluator("heilbronn_triangle")
cvx = load_evaluator("heilbronn_convex")
mm2 = load_evaluator("minmax_distance_2d")
mm3 = load_evaluator("minmax_distance_3d")


def exact_ratio2(points) -> float:
    """(d_max/d_min)² in rational arithmetic from the float coordinates."""
    pts = [[Fraction(x) for x in p] for p in points]
    d2 = [
        sum((a - b) ** 2 for a, b in zip(u, v, strict=True))
        for u, v in itertools.combinations(pts, 2)
    ]
    return float(max(d2) / min(d2))


def exact_min_area(points) -> Fraction:
    pts = [(Fraction(x), Fraction(y)) for x, y in points]
    return min(
        abs((b[0] - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (b[1] - a[1])) / 2
        for a, b, c in itertools.combinations(pts, 3)
    )


def seed_output(name: str):
    from galapagos_sandbox.testing import InProcessCandidate

    task = load_task(name)
    assert task.initial_program is not None and task.card.entry_point
    return np.asarray(InProcessCandidate(task.initial_program).call(task.card.entry_point))


# ---- max/min distance ------------------------------------------------------------------------


def test_square_grid_ratio_is_exactly_18() -> None:
    grid = [(i, j) for i in range(4) for j in range(4)]
    metrics = mm2.score_points(grid)
    assert metrics["ratio_squared"] == pytest.approx(18.0, rel=1e-15)
    assert metrics["combined_score"] == pytest.approx(12.889266112 / 18.0, rel=1e-15)


def test_cube_with_face_centres_ratio_is_exactly_6() -> None:
    corners = list(itertools.product((0.0, 1.0), repeat=3))
    faces = [
        tuple(0.5 if k != axis else side for k in range(3))
        for axis in range(3)
        for side in (0.0, 1.0)
    ]
    metrics = mm3.score_points(corners + faces)
    assert metrics["ratio_squared"] == pytest.approx(6.0, rel=1e-15)


@pytest.mark.parametrize(
    ("evaluator", "points", "value", "name"),
    [
        (mm2, MINMAX_2D_16, MINMAX_2D_16_RATIO2, "minmax_distance_2d"),
        (mm3, MINMAX_3D_14, MINMAX_3D_14_RATIO2, "minmax_distance_3d"),
    ],
)
def test_best_known_construction_scores_the_best_known_value(evaluator, points, value, name):
    card = load_task(name).card
    assert card.best_known is not None and card.best_known.combined_score is not None
    metrics = evaluator.score_points(points)
    assert metrics["validity"] == 1.0
    assert metrics["ratio_squared"] == pytest.approx(exact_ratio2(points), rel=1e-13)
    assert metrics["ratio_squared"] == pytest.approx(card.best_known.value, rel=1e-12)
    assert metrics["combined_score"] == pytest.approx(card.best_known.combined_score, rel=1e-9)


@pytest.mark.parametrize("name", ["minmax_distance_2d", "minmax_distance_3d"])
def test_seed_score_matches_exact_arithmetic(name: str) -> None:
    evaluator = mm2 if name.endswith("2d") else mm3
    points = seed_output(name)
    assert evaluator.score_points(points)["ratio_squared"] == pytest.approx(
        exact_ratio2(points.tolist()), rel=1e-12
    )


def test_minmax_is_invariant_under_similarity() -> None:
    pts = np.array(MINMAX_2D_16)
    rot = np.array([[0.6, -0.8], [0.8, 0.6]])
    moved = 1e3 * pts @ rot.T + [1e4, -7.0]
    assert mm2.score_points(moved)["ratio_squared"] == pytest.approx(MINMAX_2D_16_RATIO2, rel=1e-9)


@pytest.mark.parametrize(
    "points",
    [
        np.vstack([MINMAX_2D_16[:15], MINMAX_2D_16[:1]]),  # a repeated point: d_min = 0
        np.array(MINMAX_2D_16)[:15],
        np.where(np.arange(32).reshape(16, 2) == 3, np.nan, MINMAX_2D_16),
        np.where(np.arange(32).reshape(16, 2) == 3, -np.inf, MINMAX_2D_16),
        np.zeros((16, 2)),
        "points",
    ],
    ids=["duplicate", "shape", "nan", "inf", "all-equal", "string"],
)
def test_invalid_point_sets_for_minmax(points) -> None:
    metrics = mm2.score_points(points)
    assert is_failure(metrics) and metrics["combined_score"] == 0.0


# ---- Heilbronn -------------------------------------------------------------------------------

SQRT3 = math.sqrt(3.0)


def test_triangle_score_matches_exact_arithmetic_on_the_seed() -> None:
    points = seed_output("heilbronn_triangle")
    metrics = tri.score_points(points)
    expected = float(exact_min_area(points.tolist())) / (SQRT3 / 4)
    assert metrics["validity"] == 1.0
    assert metrics["min_area_normalized"] == pytest.approx(expected, rel=1e-12)
    assert metrics["combined_score"] == pytest.approx(expected / 0.036529889880030156, rel=1e-12)


def test_triangle_tolerance_is_1e9() -> None:
    points = seed_output("heilbronn_triangle").copy()
    points[0] = (0.5, -0.5e-9)  # below the base, within the slack
    assert tri.score_points(points)["validity"] == 1.0
    points[0] = (0.5, -2e-9)
    metrics = tri.score_points(points)
    assert is_failure(metrics) and "outside the triangle" in metrics["error"]


@pytest.mark.parametrize(
    "point",
    [(1.2, 0.1), (0.1, 0.5), (0.9, 0.5), (0.5, SQRT3 / 2 + 1e-6)],
    ids=["right", "left-edge", "right-edge", "apex"],
)
def test_points_outside_the_triangle_are_invalid(point) -> None:
    points = seed_output("heilbronn_triangle").copy()
    points[3] = point
    assert is_failure(tri.score_points(points))


def test_convex_score_matches_exact_arithmetic_and_hull_area() -> None:
    # Lattice points whose hull is the square [0, 3]² (area 9): min area by exact arithmetic.
    pts = [
        (0, 0),
        (3, 0),
        (0, 3),
        (3, 3),
        (1, 0),
        (0, 2),
        (3, 1),
        (2, 3),
        (1, 1),
        (2, 2),
        (1, 2),
        (2, 1),
        (0.5, 1.5),
    ]
    metrics = cvx.score_points(np.array(pts, dtype=float))
    assert metrics["min_area_normalized"] == pytest.approx(
        float(exact_min_area(pts)) / 9.0, abs=1e-15
    )


def test_convex_score_is_affine_invariant() -> None:
    points = seed_output("heilbronn_convex")
    base = cvx.score_points(points)["min_area_normalized"]
    sheared = points @ np.array([[2.0, 0.7], [0.0, 0.3]]) + [100.0, -40.0]
    assert cvx.score_points(sheared)["min_area_normalized"] == pytest.approx(base, rel=1e-9)


@pytest.mark.parametrize(
    "points",
    [
        np.column_stack([np.arange(13.0), 2 * np.arange(13.0)]),  # collinear: no hull
        np.ones((13, 2)),
        np.zeros((12, 2)),
        np.full((13, 2), np.nan),
        [[0, 0]] * 13,
    ],
    ids=["collinear", "coincident", "shape", "nan", "list-of-equal"],
)
def test_degenerate_sets_are_invalid_for_convex(points) -> None:
    assert is_failure(cvx.score_points(points))


# ---- rounding exploits -------------------------------------------------------------------------


@pytest.mark.parametrize("scale", [2.0**-535, 10.0**-161.75, 1.923e-161, 1e150])
@pytest.mark.parametrize("name", ["minmax_distance_2d", "minmax_distance_3d", "heilbronn_convex"])
def test_scaling_cannot_bend_the_rounding(name: str, scale: float) -> None:
    # Points shrunk until squared distances / cross products underflow into subnormals (or blown
    # up near overflow) once scored above the seed's true value; the scorer rescales first.
    evaluators = {"minmax_distance_2d": mm2, "minmax_distance_3d": mm3, "heilbronn_convex": cvx}
    evaluator = evaluators[name]
    points = seed_output(name)
    honest = evaluator.score_points(points)["combined_score"]
    scaled = evaluator.score_points(points * scale)
    assert scaled["validity"] == 1.0
    assert scaled["combined_score"] == pytest.approx(honest, rel=1e-9)
