"""Trusted scorer for the third autocorrelation inequality (AlphaEvolve B.3).

A step function h with N equal steps on [-1/4, 1/4], of any sign, gives the upper bound
C3 <= max|h*h| / (∫h)² = 2N·max|conv(h, h)| / (Σh)²; smaller is better.  Runs inside the sandbox
(stdlib + numpy + scipy only); ``score_heights`` is a pure function of the raw step heights and
``evaluate`` asks the candidate for them.  The bound is always recomputed here: the value the
candidate reports (and its reported N) are ignored (SkyDiscover's evaluator scores the reported
value within 1e-3, which can be exploited).
"""

from __future__ import annotations

from typing import Any

import numpy as np

ENTRY_POINT = "run"
#: AlphaEvolve v1's bound (verified), SkyDiscover's normaliser: combined_score = 1.45564… / C3.
BEST_KNOWN = 1.4556427953745406
#: The exact O(N²) convolution stays well under a second up to this many steps.
MAX_STEPS = 20_000
#: |Σh| below this fraction of Σ|h| is a vanishing integral: the ratio would only be noise.
MIN_RELATIVE_INTEGRAL = 1e-9


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
    """Metrics for the step heights of h given as raw data (a 1-D array of any sign)."""
    try:
        h = real_vector(heights, "f_values", MAX_STEPS)
        scale = float(np.max(np.abs(h)))
        if scale == 0.0:
            raise InvalidSolution("f_values is identically zero (∫h = 0)")
        # Scale to max |h| = 1 first: the bound is scale invariant and this keeps inputs finite.
        h = h / scale
        total = float(np.sum(h))
        if abs(total) <= MIN_RELATIVE_INTEGRAL * float(np.sum(np.abs(h))):
            raise InvalidSolution(f"∫h vanishes (Σh = {total * scale:.3g}); the bound is undefined")
    except InvalidSolution as exc:
        return invalid(str(exc))
    n = h.size
    c3 = 2.0 * n * float(np.max(np.abs(np.convolve(h, h)))) / total**2
    return {"combined_score": BEST_KNOWN / c3, "validity": 1.0, "c3": c3, "n_points": n}


def evaluate(candidate: Any) -> dict[str, Any]:
    """Score ``run() -> (f_values, c3, loss, n_points)``; only f_values is used."""
    result = candidate.call(ENTRY_POINT)
    if not isinstance(result, list | tuple) or len(result) != 4:
        return invalid(f"{ENTRY_POINT}() must return (f_values, c3, loss, n_points)")
    return score_heights(result[0])
