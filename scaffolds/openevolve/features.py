"""OpenEvolve's fitness and MAP-Elites behaviour descriptors (ports of OpenEvolve 0.4.0).

- Fitness (``get_fitness_score``): ``combined_score`` when it converts to float, else the mean
  of the numeric, non-bool, non-NaN metrics that are not feature dimensions, else the mean of
  every numeric non-bool metric; 0 for no metrics.  It differs from the harness score in
  leaving feature dimensions out.
- ``fast_diversity``: 0.1·|Δlength| + 10·|Δlines| + 0.5·|character-set symmetric difference|.
- :class:`FeatureScaler`: min-max scaling over the running min and max of every value ever
  seen (the reference keeps them in ``feature_stats``); a dimension whose min equals its max
  scales to 0.5; ``bin = clamp(int(scaled · bins), 0, bins - 1)``.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from typing import Any

from harness.core.scoring import number

__all__ = ["FeatureScaler", "fast_diversity", "fitness", "numeric_mean"]


def numeric_mean(metrics: Mapping[str, Any]) -> float:
    """The mean of the numeric non-bool metrics (``safe_numeric_average``); 0 without any."""
    values = [f for v in metrics.values() if (f := number(v)) is not None]
    return sum(values) / len(values) if values else 0.0


def fitness(metrics: Mapping[str, Any], feature_dimensions: Sequence[str] = ()) -> float:
    """OpenEvolve's fitness: see the module docstring."""
    if not metrics:
        return 0.0
    if "combined_score" in metrics:
        value = metrics["combined_score"]
        if type(value) is float:
            return value
        if isinstance(value, (numbers.Real, str)):
            try:
                return float(value)
            except ValueError:
                pass
    kept = {k: v for k, v in metrics.items() if k not in feature_dimensions}
    own = [f for v in kept.values() if (f := number(v)) is not None]
    if not own:
        return numeric_mean(metrics)
    return sum(own) / len(own)


def fast_diversity(a: str, b: str) -> float:
    """The reference's cheap stand-in for edit distance between two programs."""
    if a == b:
        return 0.0
    length = abs(len(a) - len(b))
    lines = abs(a.count("\n") - b.count("\n"))
    chars = len(set(a).symmetric_difference(set(b)))
    return length * 0.1 + lines * 10 + chars * 0.5


class FeatureScaler:
    """Running min/max per dimension, and the bin of a value under them."""

    def __init__(self) -> None:
        self.stats: dict[str, list[float]] = {}  # dimension -> [min, max]
        #: Grows whenever the scaling may have changed (bins computed before may differ).
        self.version = 0
        self._state: tuple[int, dict[str, list[float]]] | None = None

    def observe(self, dimension: str, value: float) -> None:
        seen = self.stats.get(dimension)
        if seen is None:
            self.stats[dimension] = [value, value]
            self.version += 1
        else:
            low, high = min(seen[0], value), max(seen[1], value)
            if not (low == seen[0] and high == seen[1]):  # NaN: counted as a change
                self.version += 1
            seen[0], seen[1] = low, high

    def scale(self, dimension: str, value: float) -> float:
        seen = self.stats.get(dimension)
        if seen is None:
            return min(1.0, max(0.0, value))
        low, high = seen
        if high == low:
            return 0.5
        return min(1.0, max(0.0, (value - low) / (high - low)))

    def bin(self, dimension: str, value: float, bins: int) -> int:
        """Observe ``value`` (as the reference does on every coordinate computation), then bin."""
        self.observe(dimension, value)
        return max(0, min(bins - 1, int(self.scale(dimension, value) * bins)))

    def bins_within(
        self, dimension: str, values: Sequence[float | None], bins: int
    ) -> list[int] | None:
        """``bin`` of each value (``None``: bin 0) when every one lies within the dimension's
        min/max (observing them would change nothing); ``None`` when one does not (or none was
        seen yet).  Within the range ``scale`` is ``(value - low) / (high - low)`` itself, in
        [0, 1], so the bin is that times ``bins``, capped at the last bin."""
        seen = self.stats.get(dimension)
        present = [v for v in values if v is not None]
        if not present:
            return [0] * len(values)
        if seen is None:
            return None
        low, high = seen
        if not all(low <= v <= high for v in present):  # NaN too
            return None
        top = bins - 1
        if high == low:
            middle = max(0, min(top, int(0.5 * bins)))
            return [0 if v is None else middle for v in values]
        span = high - low
        out = [0 if v is None else int((v - low) / span * bins) for v in values]
        return [top if b > top else b for b in out]

    def state_dict(self) -> dict[str, list[float]]:
        """The min/max per dimension: the same dict while ``version`` stands (never change
        it)."""
        kept = self._state
        if kept is None or kept[0] != self.version:
            kept = self._state = (self.version, {k: list(v) for k, v in self.stats.items()})
        return kept[1]

    def load_state_dict(self, state: Mapping[str, Sequence[float]]) -> None:
        self.stats = {k: [float(v[0]), float(v[1])] for k, v in state.items()}
        self.version += 1
