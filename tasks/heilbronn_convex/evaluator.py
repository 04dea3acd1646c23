"""Trusted scorer for the Heilbronn problem in a convex region, n=13 (AlphaEvolve B.10).

Place 13 points in the plane so that the smallest of the C(13,3) = 286 triangles they span is as
large as possible relative to the area of their convex hull.  The ratio is invariant under affine
maps, so there is no container.  Runs inside the sandbox (stdlib + numpy + scipy only);
``score_points`` is a pure function of the raw points and ``evaluate`` asks the candidate.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
from scipy.spatial import ConvexHull, QhullError

ENTRY_POINT = "heilbronn_convex13"
N_POINTS = 13
#: AlphaEvolve's value (verified), SkyDiscover's normaliser.
BEST_KNOWN = 0.030936889034895654
#: A hull smaller than this (relative to the squared diameter) is treated as degenerate.
MIN_RELATIVE_HULL = 1e-12
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


def unit_scale(points: np.ndarray) -> np.ndarray:
    """``points`` times an exact power of two that brings the largest |coordinate| into [0.5, 1).

    The objective is scale invariant, so this changes nothing for honest inputs; it stops a
    candidate from shrinking its points until squared distances or cross products underflow
    into subnormal numbers, whose coarse rounding would flatter the score.
    """
    largest = float(np.max(np.abs(points)))
    if largest == 0.0:
        return points
    return np.ldexp(points, -math.frexp(largest)[1])


def triangle_areas(points: np.ndarray) -> np.ndarray:
    """Areas of every triangle spanned by three of the points (shoelace formula)."""
    a, b, c = points[TRIPLES[:, 0]], points[TRIPLES[:, 1]], points[TRIPLES[:, 2]]
    cross = (b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (c[:, 0] - a[:, 0]) * (b[:, 1] - a[:, 1])
    return np.abs(cross) / 2.0


def score_points(points: Any) -> dict[str, Any]:
    """Metrics for 13 points given as raw data (an array (13, 2))."""
    try:
        p = real_array(points, (N_POINTS, 2), "points")
        # Scaling, then centring, keeps the ratio exact for tiny, huge and far-away inputs
        # (it is invariant under both).
        p = unit_scale(p)
        p = p - p.mean(axis=0)
        diameter2 = float(np.max(np.sum((p[:, None, :] - p[None, :, :]) ** 2, axis=-1)))
        if diameter2 == 0.0:
            raise InvalidSolution("all points coincide")
        try:
            hull_area = float(ConvexHull(p).volume)
        except QhullError:
            raise InvalidSolution(
                "the points are collinear: their convex hull has no area"
            ) from None
        if hull_area <= MIN_RELATIVE_HULL * diameter2:
            raise InvalidSolution("the convex hull is degenerate (zero area)")
    except InvalidSolution as exc:
        return invalid(str(exc))
    value = float(np.min(triangle_areas(p))) / hull_area
    return {"combined_score": value / BEST_KNOWN, "validity": 1.0, "min_area_normalized": value}


def evaluate(candidate: Any) -> dict[str, Any]:
    """Score ``heilbronn_convex13() -> points`` (an array (13, 2))."""
    return score_points(candidate.call(ENTRY_POINT))
