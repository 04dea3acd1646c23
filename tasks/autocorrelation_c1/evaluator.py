"""Trusted scorer for the first autocorrelation inequality (AlphaEvolve B.1).

A non-negative step function h with N equal steps on [-1/4, 1/4] gives the upper bound
C1 <= max(h*h) / (∫h)² = 2N·max(conv(h, h)) / (Σh)²; smaller is better.  Runs inside the sandbox
(stdlib + numpy + scipy only); ``score_heights`` is a pure function of the raw step heights and
``evaluate`` asks the candidate for them.  The bound is always recomputed here: the value the
candidate reports (and its reported N) are ignored.
"""

from __future__ import annotations

from typing import Any

import numpy as np

ENTRY_POINT = "run"
#: AlphaEvolve v1's bound (verified), SkyDiscover's normaliser: combined_score = 1.50529… / C1.
BEST_KNOWN = 1.5052939684401607
#: The exact O(N²) convolution stays well under a second up to this many steps.
MAX_STEPS = 20_000


class InvalidSolution(ValueError):
    """The construction breaks a validity rule; the message is fed back to the LLM."""


def invalid(reason: str) -> dict[str, Any]:
    return {"combined_score": 0.0, "validity": 0.0, "error": reason}


def real_vector(value: Any, name: str, max_len: int) -> np.ndarray:
    """``value`` as a non-empty 1-D float array of finite entries, or InvalidSolution."""
    if value is None or isinstance(value, str | bytes | dict):
        raise InvalidSolution(f"{name} must be an array of numbers, got {type(value).__name__}")
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise InvalidSolution(f"{name} is not an array of numbers ({exc})") from None
    # Booleans, strings, objects and complex numbers are refused rather than coerced.
    if arr.dtype.kind not in "iuf":
        raise InvalidSolution(f"{name} must hold real numbers, got dtype {arr.dtype}")
    if arr.ndim != 1 or not 1 <= arr.size <= max_len:
        raise InvalidSolution(
            f"{name} must be 1-D with 1..{max_len} entries, got shape {arr.shape}"
        )
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise InvalidSolution(f"{name} contains NaN or infinite values")
    return arr


def score_heights(heights: Any) -> dict[str, Any]:
    """Metrics for the step heights of h given as raw data (a 1-D array, all >= 0)."""
    try:
        h = real_vector(heights, "f_values", MAX_STEPS)
        if np.any(h < 0):
            raise InvalidSolution(f"f_values must be non-negative (min {h.min():.6g})")
        if not np.any(h > 0):
            raise InvalidSolution("f_values is identically zero (∫h = 0)")
    except InvalidSolution as exc:
        return invalid(str(exc))
    n = h.size
    # Scale to max 1 first: the bound is scale invariant and this keeps huge inputs finite.
    h = h / h.max()
    c1 = 2.0 * n * float(np.max(np.convolve(h, h))) / float(np.sum(h)) ** 2
    return {"combined_score": BEST_KNOWN / c1, "validity": 1.0, "c1": c1, "n_points": n}


def evaluate(candidate: Any) -> dict[str, Any]:
    """Score ``run() -> (f_values, c1, loss, n_points)``; only f_values is used."""
    result = candidate.call(ENTRY_POINT)
    if not isinstance(result, list | tuple) or len(result) != 4:
        return invalid(f"{ENTRY_POINT}() must return (f_values, c1, loss, n_points)")
    return score_heights(result[0])
