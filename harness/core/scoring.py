"""Score semantics and the failure predicate, exactly as the reference (SkyDiscover §2.0.2-2.0.3).

- ``get_score``: ``combined_score`` when present and castable to float, else the mean of the
  numeric, non-bool metrics, else 0.0.  One deliberate deviation: a non-finite score becomes
  ``-inf`` so that ordering stays total (the sandbox already rejects NaN before this point).
- ``is_failure``: true when ``validity`` is 0 or -1; or ``timeout is True`` with no ``validity``;
  or ``combined_score == 0`` (``False`` included) with an ``error`` in the metrics or the
  artifacts.  A bare
  ``{"error": 0.0}`` is *not* a failure (it is stored with score 0.0), as in the reference.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

__all__ = ["get_score", "is_failure", "number", "numeric_metrics"]


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
