"""What ``task check`` produces: a :class:`CheckResult` per check, one :class:`CheckReport`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["CheckReport", "CheckResult", "CheckStatus"]

CheckStatus = Literal["pass", "fail", "skip"]


@dataclass(frozen=True)
class CheckResult:
    """One check's outcome; ``detail`` says why, ``data`` holds what it saw (for ``--json``)."""

    name: str
    status: CheckStatus
    detail: str = ""
    data: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "detail": self.detail,
            "data": dict(self.data),
        }


@dataclass(frozen=True)
class CheckReport:
    """Every check of one task, in order; ``ok`` when none failed (a skip is not a pass)."""

    task: str
    path: str
    mode: str
    sandbox: str
    checks: tuple[CheckResult, ...]

    @property
    def ok(self) -> bool:
        return not any(c.status == "fail" for c in self.checks)

    def count(self, status: CheckStatus) -> int:
        return sum(c.status == status for c in self.checks)

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "path": self.path,
            "mode": self.mode,
            "sandbox": self.sandbox,
            "ok": self.ok,
            "summary": {s: self.count(s) for s in ("pass", "fail", "skip")},
            "checks": [c.to_dict() for c in self.checks],
        }
