"""circle_packing and circle_packing_rect: exact values, tolerances, and invalid packings."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from harness.core.scoring import is_failure

from .conftest import load_evaluator

sq = load_evaluator("circle_packing")
rect = load_evaluator("circle_packing_rect")


def grid_packing() -> tuple[np.ndarray, np.ndarray]:
    """25 touching circles of radius 0.1 on a 5 x 5 grid plus a point circle in a gap: Σr = 2.5."""
    centers = [(0.1 + 0.2 * i, 0.1 + 0.2 * j) for i in range(5) for j in range(5)]
    centers.append((0.2, 0.2))  # equidistant (0.1·√2) from four circles: room for radius 0.04
    radii = [0.1] * 25 + [0.0]
    return np.array(centers), np.array(radii)


def independent_sum_if_valid(centers: np.ndarray, radii: np.ndarray, tol: float) -> float | None:
    """A deliberately plain re-implementation of the rules, pair by pair."""
    for (x, y), r in zip(centers, radii, strict=True):
        if r < 0 or x - r < -tol or y - r < -tol or x + r > 1 + tol or y + r > 1 + tol:
            return None
    for i, j in itertools.combinations(range(len(radii)), 2):
        d = math.dist(centers[i], centers[j])
        if d < radii[i] + radii[j] - tol:
            return None
    return math.fsum(radii)


def lp_packing(n: int = 26) -> tuple[np.ndarray, np.ndarray]:
    """A good, valid packing computed here: the seed's staggered rows, radii from its LP."""
    from galapagos_sandbox.testing import InProcessCandidate

    from harness.evaluation.task import load_task

    source = load_task("circle_packing").initial_program
    assert source is not None
    centers, radii, _ = InProcessCandidate(source).call("run_packing")
    return np.asarray(centers), np.asarray(radii)


def test_grid_packing_scores_its_exact_sum() -> None:
    metrics = sq.score_packing(*grid_packing())
    assert metrics["validity"] == 1.0
    assert metrics["sum_radii"] == 2.5
    assert metrics["combined_score"] == 2.5 / 2.635


def test_score_matches_an_independent_check_of_a_computed_packing() -> None:
    centers, radii = lp_packing()
    metrics = sq.score_packing(centers, radii)
    expected = independent_sum_if_valid(centers, radii, sq.TOL)
    assert expected is not None and metrics["sum_radii"] == pytest.approx(expected, abs=1e-12)


def test_best_known_value_on_the_score_scale() -> None:
    # The normaliser is SkyDiscover's 2.635, so the AlphaEvolve v2 record sits just above 1.
    assert 2.6359830849 / sq.NORMALISER == pytest.approx(1.000373087, abs=1e-9)


def test_reported_sum_is_ignored() -> None:
    from galapagos_sandbox.testing import InProcessCandidate

    centers, radii = grid_packing()
    program = (
        "import numpy as np\n"
        f"C = np.array({centers.tolist()})\nR = np.array({radii.tolist()})\n"
        "def run_packing():\n    return C, R, 1000.0\n"
    )
    assert sq.evaluate(InProcessCandidate(program)) == sq.score_packing(centers, radii)


def test_overlap_within_the_stated_tolerance_is_accepted_beyond_it_rejected() -> None:
    centers, radii = grid_packing()
    inside = radii.copy()
    inside[0] += 0.5 * sq.TOL  # circles 0 and 1 now overlap by 0.5e-9
    assert sq.score_packing(centers, inside)["validity"] == 1.0
    beyond = radii.copy()
    beyond[12] += 3 * sq.TOL
    metrics = sq.score_packing(centers, beyond)
    assert is_failure(metrics) and "overlap" in metrics["error"]


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda c, r: (c + [0.05, 0.0], r), "leaves the unit square"),
        (lambda c, r: (c, np.where(np.arange(26) == 3, -0.01, r)), "negative radius"),
        (lambda c, r: (np.where(np.arange(52).reshape(26, 2) == 7, np.nan, c), r), "NaN"),
        (lambda c, r: (c, np.where(np.arange(26) == 3, np.inf, r)), "NaN or infinite"),
        (lambda c, r: (c[:25], r[:25]), "shape"),
        (lambda c, r: (c.tolist(), "2.5"), "must be an array"),
        (lambda c, r: (c, r.astype(bool)), "real numbers"),
        (lambda c, r: ([], []), "shape"),
        (lambda c, r: (None, r), "must be an array"),
    ],
)
def test_infeasible_packings_score_invalid(mutate, message: str) -> None:
    metrics = sq.score_packing(*mutate(*grid_packing()))
    assert is_failure(metrics)
    assert metrics["combined_score"] == 0.0 and metrics["validity"] == 0.0
    assert message in metrics["error"]


def test_wrong_return_arity_is_invalid() -> None:
    from galapagos_sandbox.testing import InProcessCandidate

    metrics = sq.evaluate(InProcessCandidate("def run_packing():\n    return [1, 2]\n"))
    assert is_failure(metrics) and "must return (centers, radii, sum_radii)" in metrics["error"]


# ---- circle_packing_rect ---------------------------------------------------------------------


def rect_grid(width: float = 1.0) -> np.ndarray:
    """21 circles in a 1 x 1 box: 4 x 4 of radius 1/8 plus 5 point circles in gaps (Σr = 2)."""
    circles = [(0.125 + 0.25 * i, 0.125 + 0.25 * j, 0.125) for i in range(4) for j in range(4)]
    gaps = [(0.25, 0.25), (0.5, 0.5), (0.75, 0.75), (0.25, 0.75), (0.75, 0.25)]
    circles += [(x, y, 0.0) for x, y in gaps]
    return np.array(circles) * [width, 1.0, 1.0]


def test_rect_grid_scores_its_exact_sum() -> None:
    metrics = rect.score_circles(rect_grid())
    assert metrics["validity"] == 1.0 and metrics["sum_radii"] == 2.0
    assert metrics["width"] + metrics["height"] == 2.0
    assert metrics["combined_score"] == 2.0 / rect.NORMALISER


def test_rect_perimeter_over_two_is_invalid() -> None:
    circles = rect_grid()
    circles[0, 0] -= 0.01  # pushes the bounding box 0.01 wider
    metrics = rect.score_circles(circles)
    assert is_failure(metrics) and "width + height" in metrics["error"]


def test_rect_is_translation_invariant() -> None:
    moved = rect_grid() + [5.0, -3.0, 0.0]
    assert rect.score_circles(moved)["sum_radii"] == pytest.approx(2.0, abs=1e-12)


def far_grid() -> np.ndarray:
    """A 3 x 7 grid at x, y ≈ 1.5·2^50, where doubles are 0.25 apart: each r = 0.1249999 vanishes
    from x ± r, so the naive bounding box is 0.5 x 1.5 instead of 0.75 x 1.75 (an infeasible
    packing that scored 1.11 before centres were bounded)."""
    base, step = 1.5 * 2.0**50, 0.25
    return np.array(
        [(base + i * step, base + j * step, 0.1249999) for i in range(3) for j in range(7)]
    )


def test_rect_far_from_the_origin_is_refused_with_a_remedy() -> None:
    metrics = rect.score_circles(far_grid())
    assert is_failure(metrics) and metrics["combined_score"] == 0.0
    assert "translate the packing" in metrics["error"]
    # Within the limit a translation changes nothing.
    moved = rect_grid() + [rect.COORD_LIMIT - 1.0, -rect.COORD_LIMIT + 1.0, 0.0]
    assert rect.score_circles(moved)["sum_radii"] == pytest.approx(2.0, abs=1e-12)


@pytest.mark.parametrize(
    "circles",
    [
        rect_grid()[:20],
        np.where(np.arange(63).reshape(21, 3) == 5, np.nan, rect_grid()),
        rect_grid() * [1.0, 1.0, 1.01],  # every radius 1 % too large: neighbours overlap
        np.where(np.arange(63).reshape(21, 3) == 62, -1.0, rect_grid()),
    ],
    ids=["shape", "nan", "overlap", "negative"],
)
def test_rect_infeasible_scores_invalid(circles: np.ndarray) -> None:
    assert is_failure(rect.score_circles(circles))


def test_computed_near_record_packing_scores_its_exact_sum() -> None:
    from .constructions import CIRCLE_PACKING_26_CENTERS, CIRCLE_PACKING_26_RADII

    centers, radii = np.array(CIRCLE_PACKING_26_CENTERS), np.array(CIRCLE_PACKING_26_RADII)
    # Valid even with zero tolerance, as AlphaEvolve checks.
    assert independent_sum_if_valid(centers, radii, tol=0.0) is not None
    metrics = sq.score_packing(centers, radii)
    assert metrics["sum_radii"] == pytest.approx(math.fsum(CIRCLE_PACKING_26_RADII), abs=1e-15)
    assert 2.63 < metrics["sum_radii"] < 2.6359830849
    # Growing any one circle by 1e-8 breaks it: the scorer sees contacts at that precision.
    grown = radii.copy()
    grown[int(np.argmax(radii))] += 1e-8
    assert is_failure(sq.score_packing(centers, grown))


def test_computed_near_record_rect_packing_scores_its_exact_sum() -> None:
    from .constructions import CIRCLE_PACKING_RECT_21

    circles = np.array(CIRCLE_PACKING_RECT_21)
    metrics = rect.score_circles(circles)
    assert metrics["validity"] == 1.0
    assert metrics["sum_radii"] == pytest.approx(math.fsum(circles[:, 2]), abs=1e-15)
    assert metrics["width"] + metrics["height"] <= 2.0
    assert 2.36 < metrics["sum_radii"] < 2.3658323759
    # Zero-tolerance validity, checked pair by pair.
    for i, j in itertools.combinations(range(21), 2):
        assert math.dist(circles[i, :2], circles[j, :2]) >= circles[i, 2] + circles[j, 2]


def test_tolerance_slack_never_pays() -> None:
    """Growing every radius by just under the slack keeps the packing valid, yet the score does
    not rise: it sums certified radii (the review's LP "beat" the record by 1.3e-8 this way)."""
    from .constructions import CIRCLE_PACKING_26_CENTERS, CIRCLE_PACKING_26_RADII

    centers, radii = np.array(CIRCLE_PACKING_26_CENTERS), np.array(CIRCLE_PACKING_26_RADII)
    exact = sq.score_packing(centers, radii)
    grown = sq.score_packing(centers, radii + 4.99e-10)
    assert grown["validity"] == 1.0
    assert grown["sum_radii"] <= exact["sum_radii"] + 1e-12
    assert grown["tolerance_deducted"] > 26 * 4e-10
    assert exact["tolerance_deducted"] < 1e-12

    circles = rect_grid()
    base = rect.score_circles(circles)["sum_radii"]
    grown_rect = rect.score_circles(circles + [0.0, 0.0, 2.4e-10])  # box + 9.6e-10
    assert grown_rect["validity"] == 1.0 and grown_rect["sum_radii"] <= base + 1e-12
