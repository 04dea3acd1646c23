"""Score semantics and the failure predicate, exactly as the reference (SkyDiscover §2.0.2-2.0.3).

- ``get_score``: ``combined_score`` when present and castable to float, else the mean of the
  numeric, non-bool metrics, else 0.0.  One deliberate deviation: a non-finite score becomes
  ``-inf`` so that ordering stays total (the sandbox already rejects NaN before this point).
- ``is_failure``: true when ``validity`` is 0 or -1; or ``timeout is True`` with no ``validity``;
  or ``combined_score == 0`` (``False`` included) with an ``error`` in the metrics or the
  artifacts.  A bare
  ``{"error": 0.0}`` is *not* a failure (it is stored with score 0.0), as in the reference.
- ``improves``: a new best must beat the incumbent by more than float noise (a relative and an
  absolute tolerance, ``general.improvement_rtol``/``improvement_atol``); runs, benchmarks and
  the hub use this one rule, so an effectively identical child never becomes a "new best".
- :class:`Objective`: what a run maximises.  A native task (``task.yaml``) is scored by its
  card: ``combined_score`` when the evaluator returns it (the card's ``score:`` says how it is
  derived from the raw metric), else the card's ``metric`` in the card's ``direction``; a result
  with neither has no objective (the seed stops the run, a candidate's attempt fails).  A
  compat folder keeps the reference's rule (``get_score``), and says when it averages.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "DEFAULT_ATOL",
    "DEFAULT_RTOL",
    "Objective",
    "get_score",
    "improves",
    "is_failure",
    "number",
    "numeric_metrics",
]

#: Default margin of a new best: float noise, no more (two sums of the same radii in another
#: order differ by ~1e-16 relative; a real improvement of a search is far above 1e-12).
DEFAULT_RTOL = 1e-12
DEFAULT_ATOL = 1e-15


def number(value: Any) -> float | None:
    """``value`` as a float when it is a real, non-bool number other than NaN, else ``None``
    (infinities are kept, as the references keep them)."""
    if type(value) is float:  # the common case, without the isinstance chain
        return None if value != value else value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    f = float(value)
    return None if math.isnan(f) else f


def _is_number(v: Any) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def numeric_metrics(metrics: Mapping[str, Any]) -> dict[str, float]:
    """The numeric, non-bool metrics as floats."""
    return {k: float(v) for k, v in metrics.items() if _is_number(v)}


def get_score(metrics: Mapping[str, Any]) -> float:
    if "combined_score" in metrics:
        try:
            value = float(metrics["combined_score"])
        except (TypeError, ValueError):
            value = None
        if value is not None:
            return value if math.isfinite(value) else float("-inf")
    nums = list(numeric_metrics(metrics).values())
    if not nums:
        return 0.0
    mean = sum(nums) / len(nums)
    return mean if math.isfinite(mean) else float("-inf")


def is_failure(metrics: Mapping[str, Any], artifacts: Mapping[str, Any] | None = None) -> bool:
    artifacts = artifacts or {}
    validity = metrics.get("validity")
    if validity is not None and not isinstance(validity, str) and validity in (0, -1):
        return True
    if metrics.get("timeout") is True and "validity" not in metrics:
        return True
    if "combined_score" in metrics:
        cs = metrics["combined_score"]
        # ``False == 0`` in the reference's check, so a bool counts here too.
        if (
            isinstance(cs, numbers.Real)
            and cs == 0
            and ("error" in metrics or "error" in artifacts)
        ):
            return True
    return False


def improves(
    new: float, old: float | None, *, rtol: float = DEFAULT_RTOL, atol: float = DEFAULT_ATOL
) -> bool:
    """Whether ``new`` beats ``old`` by more than ``max(rtol·max(|new|, |old|), atol)`` (any
    finite value beats none or -inf)."""
    if old is None:
        return True
    if not (math.isfinite(new) and math.isfinite(old)):
        return new > old
    return new - old > max(rtol * max(abs(new), abs(old)), atol)


@dataclass(frozen=True)
class Objective:
    """What a run maximises (see the module docstring).  The default is the reference's rule."""

    #: The card's metric holding the raw objective (``None``: the card names none).
    metric: str | None = None
    direction: Literal["maximize", "minimize"] = "maximize"
    #: A native card decides the objective; a compat folder keeps the reference's rule.
    native: bool = False

    def score(self, metrics: Mapping[str, Any]) -> float:
        """The score of a result: ``combined_score``, else (native) the card's metric in its
        direction, else (compat) the reference's mean rule."""
        if self.native and not _has_number(metrics, "combined_score") and self.metric:
            value = number(metrics.get(self.metric))
            if value is not None:
                value = value if self.direction == "maximize" else -value
                return value if math.isfinite(value) else float("-inf")
        return get_score(metrics)

    def missing(self, metrics: Mapping[str, Any]) -> str:
        """Why a native result has no objective ("" when it has one, and always for compat)."""
        if not self.native or _has_number(metrics, "combined_score"):
            return ""
        if self.metric and number(metrics.get(self.metric)) is not None:
            return ""
        names = ", ".join(sorted(numeric_metrics(metrics))) or "none"
        wanted = (
            f"no numeric combined_score and no {self.metric!r} (the card's metric)"
            if self.metric
            else "no numeric combined_score (the card names no metric: add metric: to task.yaml)"
        )
        return f"the result has no objective: {wanted}; its numeric metrics: {names}"

    def averaged(self, metrics: Mapping[str, Any]) -> list[str]:
        """The metrics the reference's rule averages into the score (empty: it does not)."""
        if _has_number(metrics, "combined_score") or self.missing(metrics):
            return []
        if self.native and self.metric and number(metrics.get(self.metric)) is not None:
            return []
        return sorted(numeric_metrics(metrics))

    def describe(self) -> str:
        if not self.native:
            return "combined_score, else the mean of the numeric metrics (the reference's rule)"
        if not self.metric:
            return "combined_score"
        sign = "" if self.direction == "maximize" else "-"
        return f"combined_score, else {sign}{self.metric} ({self.direction})"


def _has_number(metrics: Mapping[str, Any], key: str) -> bool:
    value = metrics.get(key)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False
    return not math.isnan(float(value))
