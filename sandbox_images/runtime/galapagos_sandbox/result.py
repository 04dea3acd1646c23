"""``EvaluationResult``: metrics plus artifacts, shaped like OpenEvolve's and SkyDiscover's.

Sealed evaluators may return it (or a plain dict of metrics); the compat shims re-export it so
``from openevolve.evaluation_result import EvaluationResult`` works unchanged in the sandbox.
A plain class rather than a dataclass: ``dataclasses`` costs ~25 ms of start-up per container.
"""

from __future__ import annotations

# typing costs milliseconds of container start-up; annotations are strings anyway.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


__all__ = ["EvaluationResult"]


class EvaluationResult:
    __slots__ = ("artifacts", "metrics")

    def __init__(self, metrics: dict[str, Any], artifacts: dict[str, Any] | None = None) -> None:
        self.metrics = metrics
        self.artifacts = artifacts if artifacts is not None else {}

    def __repr__(self) -> str:
        return f"EvaluationResult(metrics={self.metrics!r}, artifacts={self.artifacts!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, EvaluationResult):
            return NotImplemented
        return (self.metrics, self.artifacts) == (other.metrics, other.artifacts)

    __hash__ = None  # type: ignore[assignment]  (mutable, like the dataclass it mirrors)

    @classmethod
    def from_dict(cls, metrics: dict[str, Any]) -> EvaluationResult:
        return cls(metrics=dict(metrics))

    def to_dict(self) -> dict[str, Any]:
        return dict(self.metrics)

    def has_artifacts(self) -> bool:
        return bool(self.artifacts)

    def get_artifact_keys(self) -> list[str]:
        return list(self.artifacts)

    def get_artifact_size(self, key: str) -> int:
        value = self.artifacts.get(key)
        if value is None:
            return 0
        return len(value) if isinstance(value, bytes) else len(str(value).encode())

    def get_total_artifact_size(self) -> int:
        return sum(self.get_artifact_size(k) for k in self.artifacts)
