"""Trusted scorer for the max/min distance ratio, n=16 points in 2D (AlphaEvolve B.8).

Place 16 points in R^2 to minimise (d_max / d_min)², the squared ratio of the largest to the
smallest pairwise distance.  Runs inside the sandbox (stdlib + numpy + scipy only);
``score_points`` is a pure function of the raw points and ``evaluate`` asks the candidate.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.spatial.distance import pdist

ENTRY_POINT = "min_max_dist_dim2_16"
N_POINTS = 16
DIMENSION = 2
#: AlphaEvolve's value (verified), SkyDiscover's normaliser: combined_score = 12.889266112 / ratio².
BEST_KNOWN = 12.889266112
#: A smallest distance below this fraction of the largest counts as coincident points.
MIN_RELATIVE_DISTANCE = 1e-9


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


def score_points(points: Any) -> dict[str, Any]:
    """Metrics for 16 points given as raw data (an array (16, 2))."""
    try:
        p = real_array(points, (N_POINTS, DIMENSION), "points")
        # Scaling, then centring, keeps distances exact for tiny, huge and far-away inputs
        # (the ratio is invariant under both).
        p = unit_scale(p)
        d = pdist(p - p.mean(axis=0))
        d_min, d_max = float(np.min(d)), float(np.max(d))
        if not d_max > 0.0 or d_min <= MIN_RELATIVE_DISTANCE * d_max:
            raise InvalidSolution("two points coincide (the smallest distance is zero)")
    except InvalidSolution as exc:
        return invalid(str(exc))
    ratio2 = (d_max / d_min) ** 2
    return {"combined_score": BEST_KNOWN / ratio2, "validity": 1.0, "ratio_squared": ratio2}


def evaluate(candidate: Any) -> dict[str, Any]:
    """Score ``min_max_dist_dim2_16() -> points`` (an array (16, 2))."""
    return score_points(candidate.call(ENTRY_POINT))
