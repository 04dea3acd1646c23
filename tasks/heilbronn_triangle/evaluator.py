"""Trusted scorer for the Heilbronn problem in a triangle, n=11 (AlphaEvolve B.9).

Place 11 points in the equilateral triangle (0,0), (1,0), (1/2, √3/2) so that the smallest of
the C(11,3) = 165 triangles they span has the largest possible area, normalised by the area of
the container.  Runs inside the sandbox (stdlib + numpy + scipy only); ``score_points`` is a pure
function of the raw points and ``evaluate`` asks the candidate for them.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

ENTRY_POINT = "heilbronn_triangle11"
N_POINTS = 11
#: AlphaEvolve's value (verified), SkyDiscover's normaliser.
BEST_KNOWN = 0.036529889880030156
#: Slack on the three half-plane tests (AlphaEvolve uses none, SkyDiscover 1e-6).  A point may
#: stray 1e-9 outside, which moves the normalised area by at most ~1e-9.
TOL = 1e-9
SQRT3 = math.sqrt(3.0)
CONTAINER_AREA = SQRT3 / 4.0
TRIPLES = np.array(list(itertools.combinations(range(N_POINTS), 3)))


class InvalidSolution(ValueError):
    """The construction breaks a validity rule; the message is fed back to the LLM."""


def invalid(reason: str) -> dict[str, Any]:
    return {"combined_score": 0.0, "validity": 0.0, "error": reason}


def real_array(value: Any, shape: tuple[int, ...], name: str) -> np.ndarray:
    """``value`` as a float array of exactly ``shape`` with finite entries, or InvalidSolution."""
    if value is None or isinstance(value, str | bytes | dict):
        raise InvalidSolution(f"{name} must be an array of numbers, got {type(value).__name__}")
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise InvalidSolution(f"{name} is not a rectangular array of numbers ({exc})") from None
    # Booleans, strings, objects and complex numbers are refused rather than coerced.
    if arr.dtype.kind not in "iuf":
        raise InvalidSolution(f"{name} must hold real numbers, got dtype {arr.dtype}")
    if arr.shape != shape:
        raise InvalidSolution(f"{name} has shape {arr.shape}, expected {shape}")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise InvalidSolution(f"{name} contains NaN or infinite values")
    return arr


def triangle_areas(points: np.ndarray) -> np.ndarray:
    """Areas of every triangle spanned by three of the points (shoelace formula)."""
    a, b, c = points[TRIPLES[:, 0]], points[TRIPLES[:, 1]], points[TRIPLES[:, 2]]
    cross = (b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (c[:, 0] - a[:, 0]) * (b[:, 1] - a[:, 1])
    return np.abs(cross) / 2.0


def score_points(points: Any) -> dict[str, Any]:
    """Metrics for 11 points given as raw data (an array (11, 2))."""
    try:
        p = real_array(points, (N_POINTS, 2), "points")
        x, y = p[:, 0], p[:, 1]
        # Inside the triangle: distances to the base, the right edge and the left edge (the
        # slanted edges' normals (±√3, 1) have length 2, hence the halves: the same slack
        # everywhere).
        slack = np.minimum.reduce([y, (SQRT3 * (1.0 - x) - y) / 2.0, (SQRT3 * x - y) / 2.0])
        if np.any(slack < -TOL):
            i = int(np.argmin(slack))
            raise InvalidSolution(
                f"point {i} {p[i].tolist()} is outside the triangle (0,0), (1,0), (1/2, √3/2) "
                f"by {-slack[i]:.3g} (tolerance {TOL:g})"
            )
    except InvalidSolution as exc:
        return invalid(str(exc))
    value = float(np.min(triangle_areas(p))) / CONTAINER_AREA
    return {"combined_score": value / BEST_KNOWN, "validity": 1.0, "min_area_normalized": value}


def evaluate(candidate: Any) -> dict[str, Any]:
    """Score ``heilbronn_triangle11() -> points`` (an array (11, 2))."""
    return score_points(candidate.call(ENTRY_POINT))
