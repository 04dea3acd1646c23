"""The programs Valid(·) feeds a candidate strategy, as wire records (plain data).

Ids, metrics and iteration numbers of the reference checks are the reference's (§2.6.3), so a
strategy sees what it would see in SkyDiscover's validator.  Solutions are one-liners there and
here: a strategy that only breaks on long, real solutions gets past Valid(·) and is caught at
run time by the fallback chain instead.
"""

from __future__ import annotations

import random
from typing import Any

__all__ = [
    "ERROR_METRICS",
    "FAILED_METRICS",
    "IMMUTABILITY_METRICS",
    "record",
    "stress_records",
]

ERROR_METRICS = {
    "combined_score": 0.0,
    "error": "Stage 1 error: cannot access local variable 'r' where it is not associated "
    "with a value",
    "runs_successfully": 0.0,
}
IMMUTABILITY_METRICS = {
    "combined_score": 0.85,
    "correlation": 0.92,
    "success_rate": 1.0,
    "error": "No error",
    "execution_time": 0.123,
}
#: Metrics of programs that failed or were never scored (our addition to the reference).
FAILED_METRICS: tuple[dict[str, Any], ...] = (
    {},
    {"error": "Traceback (most recent call last): ZeroDivisionError"},
    {"combined_score": None, "error": "timeout"},
    {"validity": 0, "combined_score": 0.0, "error": "invalid packing"},
    {"combined_score": "n/a"},
    {"combined_score": float("nan")},
    {"timeout": True},
    {"combined_score": float("-inf"), "validity": -1},
)


def record(
    pid: str,
    metrics: dict[str, Any],
    iteration: int,
    *,
    solution: str | None = None,
    parent_id: str | None = None,
    context_ids: list[str] | None = None,
) -> dict[str, Any]:
    return {
        "id": pid,
        "solution": solution if solution is not None else f"def {pid}(): return {iteration}",
        "language": "python",
        "metrics": dict(metrics),
        "iteration_found": iteration,
        "parent_id": parent_id,
        "other_context_ids": list(context_ids or []) if parent_id else None,
        "parent_info": ["", parent_id] if parent_id else None,
        "context_info": [["", c] for c in context_ids or []] if parent_id else None,
        "timestamp": float(iteration),
        "metadata": {},
        "artifacts": {},
        "generation": 0,
    }


def stress_records(n: int, seed: int = 0) -> list[dict[str, Any]]:
    """``n`` programs with a lineage (parents, context) and noisy, slowly rising scores."""
    rng = random.Random(seed)
    out = [record("stress_0", {"combined_score": 0.1}, 0)]
    for i in range(1, n):
        parent = f"stress_{rng.randrange(i)}"
        context = [f"stress_{j}" for j in rng.sample(range(i), min(2, i))]
        score = round(min(1.0, 0.1 + 0.8 * i / n + rng.uniform(-0.05, 0.05)), 6)
        out.append(
            record(
                f"stress_{i}", {"combined_score": score}, i, parent_id=parent, context_ids=context
            )
        )
    return out
