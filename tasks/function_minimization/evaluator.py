"""Trusted scorer for the function-minimisation smoke test (the OpenEvolve example).

Find the global minimum of f(x, y) = sin x · cos y + sin(x y) + (x² + y²)/20 on [-5, 5]².  The
minimum, -1.5186858408 at (-1.70408, 0.67751), was computed with 3000-start L-BFGS-B.  Too easy
for a benchmark; it exists to exercise the whole pipeline (and the cascade) quickly.

Runs inside the sandbox (stdlib + numpy + scipy only); ``score_point`` is a pure function of the
raw point and the stage functions ask the candidate for it.  f is always recomputed here: the
value the candidate reports is ignored.
"""

from __future__ import annotations

import math
from typing import Any

ENTRY_POINT = "run_search"
F_STAR = -1.518685840848579
X_STAR = (-1.7040828379619468, 0.6775078091372675)
BOUND = 5.0


def f(x: float, y: float) -> float:
    return math.sin(x) * math.cos(y) + math.sin(x * y) + (x * x + y * y) / 20.0


def invalid(reason: str) -> dict[str, Any]:
    return {"combined_score": 0.0, "validity": 0.0, "error": reason}


def _coordinate(value: Any, name: str) -> float:
    # bool is an int subclass; refuse it rather than read True as 1.0.
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{name} must be a number, got {type(value).__name__}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} is NaN or infinite")
    if abs(value) > BOUND:
        raise ValueError(f"{name} = {value:.6g} is outside [-5, 5]")
    return value


def score_point(x: Any, y: Any) -> dict[str, Any]:
    """Metrics for a point given as raw data; combined_score = 1 / (1 + f(x, y) - f*)."""
    try:
        x, y = _coordinate(x, "x"), _coordinate(y, "y")
    except ValueError as exc:
        return invalid(str(exc))
    value = f(x, y)
    return {
        "combined_score": 1.0 / (1.0 + max(0.0, value - F_STAR)),
        "validity": 1.0,
        "value": value,
        "distance": math.hypot(x - X_STAR[0], y - X_STAR[1]),
    }


def _point(candidate: Any) -> dict[str, Any]:
    result = candidate.call(ENTRY_POINT)
    if not isinstance(result, list | tuple) or len(result) not in (2, 3):
        return invalid(f"{ENTRY_POINT}() must return (x, y) or (x, y, value)")
    # numpy scalars arrive as 0-d arrays or plain floats; accept either.
    coords = [
        c.item() if hasattr(c, "item") and getattr(c, "ndim", 1) == 0 else c for c in result[:2]
    ]
    return score_point(*coords)


def evaluate_stage1(candidate: Any) -> dict[str, Any]:
    """Quick screen: a valid point with a recomputed value."""
    metrics = _point(candidate)
    metrics.pop("distance", None)
    return metrics


def evaluate_stage2(candidate: Any) -> dict[str, Any]:
    """Full score, with the distance to the known minimiser."""
    return _point(candidate)


def evaluate(candidate: Any) -> dict[str, Any]:
    return evaluate_stage2(candidate)
