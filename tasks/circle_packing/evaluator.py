"""Trusted scorer for circle packing: 26 disjoint disks in the unit square, maximise Σ radii.

Runs inside the sandbox (stdlib + numpy + scipy only).  ``score_packing`` is a pure function of
the raw construction, so tests can feed it published packings; ``evaluate`` is the thin wrapper
that asks the candidate for its construction through the candidate handle.  The sum of radii is
always recomputed here: the ``sum_radii`` the candidate reports is ignored.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

ENTRY_POINT = "run_packing"
N_CIRCLES = 26
#: The SkyDiscover/AlphaEvolve normaliser, so scores compare with theirs: sum_radii / 2.635.
NORMALISER = 2.635
#: Absolute slack on containment and non-overlap.  It absorbs floating-point rounding in the
#: candidate's own arithmetic, and it never pays: the score sums *certified* radii (each radius
#: less the largest violation of a constraint it is part of), which pack with no slack at all.
TOL = 1e-9
#: Violations this small are the rounding of honest arithmetic (touching disks computed in
#: floats) and are not deducted; all of them together are worth under 3e-12 in the sum.
ROUNDING = 1e-13


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


def check_packing(centers: np.ndarray, radii: np.ndarray) -> None:
    """Raise InvalidSolution unless every disk is inside [0,1]² and no two disks overlap."""
    if np.any(radii < 0):
        i = int(np.argmin(radii))
        raise InvalidSolution(f"circle {i} has negative radius {radii[i]:.6g}")
    x, y = centers[:, 0], centers[:, 1]
    slack = np.minimum.reduce([x - radii, y - radii, 1 - x - radii, 1 - y - radii])
    if np.any(slack < -TOL):
        i = int(np.argmin(slack))
        raise InvalidSolution(
            f"circle {i} (centre {centers[i].tolist()}, radius {radii[i]:.6g}) leaves the unit "
            f"square by {-slack[i]:.3g} (tolerance {TOL:g})"
        )
    i, j = np.triu_indices(len(radii), k=1)
    dist = np.hypot(x[i] - x[j], y[i] - y[j])
    gap = dist - (radii[i] + radii[j])
    if np.any(gap < -TOL):
        k = int(np.argmin(gap))
        raise InvalidSolution(
            f"circles {int(i[k])} and {int(j[k])} overlap by {-gap[k]:.3g} "
            f"(centre distance {dist[k]:.9g}, radii sum {radii[i[k]] + radii[j[k]]:.9g}; "
            f"tolerance {TOL:g})"
        )


def certified_radii(centers: np.ndarray, radii: np.ndarray) -> np.ndarray:
    """Each radius less the largest violation (within TOL) of a constraint it takes part in.

    The result packs with zero tolerance: a pair overlapping by d loses d from both radii, a
    disk sticking out by d loses d.  Exact packings lose nothing; slack can never add score.
    """
    x, y = centers[:, 0], centers[:, 1]
    outside = -np.minimum.reduce([x - radii, y - radii, 1 - x - radii, 1 - y - radii])
    violation = np.maximum(outside, 0.0)
    i, j = np.triu_indices(len(radii), k=1)
    overlap = np.maximum((radii[i] + radii[j]) - np.hypot(x[i] - x[j], y[i] - y[j]), 0.0)
    np.maximum.at(violation, i, overlap)
    np.maximum.at(violation, j, overlap)
    violation[violation <= ROUNDING] = 0.0
    return np.maximum(radii - violation, 0.0)


def score_packing(centers: Any, radii: Any) -> dict[str, Any]:
    """Metrics for a packing given as raw data (centres (26, 2), radii (26,))."""
    try:
        c = real_array(centers, (N_CIRCLES, 2), "centers")
        r = real_array(radii, (N_CIRCLES,), "radii")
        check_packing(c, r)
    except InvalidSolution as exc:
        return invalid(str(exc))
    total = math.fsum(certified_radii(c, r).tolist())
    return {
        "combined_score": total / NORMALISER,
        "validity": 1.0,
        "sum_radii": total,
        "tolerance_deducted": math.fsum(r.tolist()) - total,
    }


def evaluate(candidate: Any) -> dict[str, Any]:
    """Score ``run_packing() -> (centers, radii, sum_radii)``; the reported sum is ignored."""
    result = candidate.call(ENTRY_POINT)
    if not isinstance(result, list | tuple) or len(result) != 3:
        return invalid(
            f"{ENTRY_POINT}() must return (centers, radii, sum_radii), got "
            f"{type(result).__name__}"
            + (f" of length {len(result)}" if isinstance(result, list | tuple) else "")
        )
    centers, radii, _reported = result
    return score_packing(centers, radii)
