"""Statistics over a benchmark's seeds, and how numbers are printed in its tables.

- :func:`bootstrap_ci`: the 95 % percentile bootstrap interval of the mean over seeds (2000
  resamples, a fixed RNG seed, so the interval of the same scores is always the same);
- :func:`rank_by_intervals`: a row's rank is 1 + the number of rows whose interval lies wholly
  above its own (by more than float noise); rows whose intervals overlap tie.  With one seed the
  interval is the single score, so ranks then order scores (and say nothing about spread);
- :func:`sig`: one number of significant digits for every value of a table (``1.000``, never
  ``1`` next to ``0.9106``); a spread within float noise of its mean prints as ``0``.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence
from typing import Any

from harness.core.scoring import improves

__all__ = [
    "BOOTSTRAP_RESAMPLES",
    "CI_LEVEL",
    "RANK_RULE",
    "bootstrap_ci",
    "rank_by_intervals",
    "sig",
    "spread",
]

BOOTSTRAP_RESAMPLES = 2000
CI_LEVEL = 0.95
#: The ranking rule, as tables state it.
RANK_RULE = (
    "rank = 1 + the number of scaffolds whose 95% bootstrap CI of the mean over seeds lies "
    "wholly above (overlapping intervals tie)"
)


def bootstrap_ci(values: Sequence[float], *, level: float = CI_LEVEL) -> tuple[float, float]:
    """The percentile bootstrap interval of the mean of ``values`` (a point for one value)."""
    if not values:
        raise ValueError("no values")
    if len(values) == 1 or max(values) == min(values):
        return float(values[0]), float(values[0])
    rng = random.Random(0)
    n = len(values)
    means = sorted(statistics.fmean(rng.choices(values, k=n)) for _ in range(BOOTSTRAP_RESAMPLES))
    tail = (1.0 - level) / 2
    low = means[math.floor(tail * (BOOTSTRAP_RESAMPLES - 1))]
    high = means[math.ceil((1.0 - tail) * (BOOTSTRAP_RESAMPLES - 1))]
    return low, high


def rank_by_intervals(rows: list[dict[str, Any]], *, group: str = "task") -> None:
    """Set ``rank`` on rows with ``ci_low``/``ci_high`` (per ``group``): tied unless another
    row's interval lies wholly above."""
    for key in dict.fromkeys(r[group] for r in rows):
        ranked = [r for r in rows if r[group] == key and r.get("ci_low") is not None]
        for r in ranked:
            r["rank"] = 1 + sum(
                1 for other in ranked if improves(other["ci_low"], r["ci_high"], rtol=1e-9)
            )


def sig(value: float | None, digits: int = 4) -> str:
    """``value`` with ``digits`` significant digits, trailing zeros kept (``-`` for none)."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    if value == 0:
        return "0"
    text = f"{value:#.{digits}g}"
    return text.rstrip(".") if "e" not in text else text


def spread(std: float | None, mean: float | None, digits: int = 2) -> str:
    """A standard deviation for a table: ``-`` for none, ``0`` within float noise of the mean
    (identical runs summed in another order), else ``digits`` significant digits."""
    if std is None:
        return "-"
    if std <= max(1e-9 * abs(mean or 0.0), 1e-12):
        return "0"
    return sig(std, digits)
