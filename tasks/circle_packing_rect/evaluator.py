"""Trusted scorer for circle packing in a rectangle: 21 disjoint disks inside some rectangle of
perimeter 4 (width + height ≤ 2), maximise the sum of radii (AlphaEvolve B.13).

Runs inside the sandbox (stdlib + numpy + scipy only).  ``score_circles`` is a pure function of
the raw construction; ``evaluate`` asks the candidate for it.  The rectangle is not an input:
the smallest axis-aligned box around the disks must have width + height ≤ 2.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

ENTRY_POINT = "circle_packing21"
N_CIRCLES = 21
#: AlphaEvolve v1's value, SkyDiscover's normaliser: combined_score = sum_radii / 2.3658321334.
NORMALISER = 2.3658321334167627
#: Absolute slack on non-overlap and on the perimeter.  It never pays: the score sums radii
#: less the largest violation each takes part in (a box over by d costs every radius d/4).
TOL = 1e-9
#: Violations this small are the rounding of honest arithmetic and are not deducted (all of
#: them together are worth under 3e-12 in the sum).
ROUNDING = 1e-13
#: Centres must lie within [-COORD_LIMIT, COORD_LIMIT]².  Any packing fits in a 2 x 2 box, so this
#: costs nothing; it keeps x ± r exact to well under TOL (far from the origin, doubles are so
#: coarse that a small radius would vanish from the bounding box).
COORD_LIMIT = 1e3


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


def score_circles(circles: Any) -> dict[str, Any]:
    """Metrics for disks given as raw data: an array (21, 3) of rows (x, y, radius)."""
    try:
        c = real_array(circles, (N_CIRCLES, 3), "circles")
        x, y, r = c[:, 0], c[:, 1], c[:, 2]
        if np.any(r < 0):
            i = int(np.argmin(r))
            raise InvalidSolution(f"circle {i} has negative radius {r[i]:.6g}")
        if np.any(np.abs(c[:, :2]) > COORD_LIMIT):
            i = int(np.argmax(np.max(np.abs(c[:, :2]), axis=1)))
            raise InvalidSolution(
                f"circle {i} has its centre at ({x[i]:.6g}, {y[i]:.6g}), outside "
                f"[-{COORD_LIMIT:g}, {COORD_LIMIT:g}]²: translate the packing towards the origin"
            )
        width = float(np.max(x + r) - np.min(x - r))
        height = float(np.max(y + r) - np.min(y - r))
        if width + height > 2.0 + TOL:
            raise InvalidSolution(
                f"the bounding box is {width:.9g} x {height:.9g}: width + height = "
                f"{width + height:.9g} > 2 (perimeter 4; tolerance {TOL:g})"
            )
        i, j = np.triu_indices(N_CIRCLES, k=1)
        dist = np.hypot(x[i] - x[j], y[i] - y[j])
        gap = dist - (r[i] + r[j])
        if np.any(gap < -TOL):
            k = int(np.argmin(gap))
            raise InvalidSolution(
                f"circles {int(i[k])} and {int(j[k])} overlap by {-gap[k]:.3g} (tolerance {TOL:g})"
            )
    except InvalidSolution as exc:
        return invalid(str(exc))
    # Certified radii (see the module doc): slack within TOL never adds score.
    overlap = np.maximum(-gap, 0.0)
    violation = np.zeros(N_CIRCLES)
    np.maximum.at(violation, i, overlap)
    np.maximum.at(violation, j, overlap)
    # Shrinking every radius by s shrinks width + height by 4s.
    violation += max(width + height - 2.0, 0.0) / 4.0
    violation[violation <= ROUNDING] = 0.0
    total = math.fsum(np.maximum(r - violation, 0.0).tolist())
    return {
        "combined_score": total / NORMALISER,
        "tolerance_deducted": math.fsum(r.tolist()) - total,
        "validity": 1.0,
        "sum_radii": total,
        "width": width,
        "height": height,
    }


def evaluate(candidate: Any) -> dict[str, Any]:
    """Score ``circle_packing21() -> circles`` (an array of 21 rows x, y, r)."""
    return score_circles(candidate.call(ENTRY_POINT))
