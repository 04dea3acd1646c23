"""Per-check results of Valid(·) and the text fed back to the meta-LLM when a strategy fails."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

__all__ = ["CheckFailed", "CheckResult", "Status", "ValidationReport"]

Status = Literal["pass", "fail", "skipped"]


class CheckFailed(Exception):
    """Raised by a check with the reason, phrased for the strategy's author."""


@dataclass(frozen=True)
class CheckResult:
    name: str
    status: Status
    detail: str = ""
    #: True for the reference's own checks (SkyDiscover §2.6.3), False for Galapagos' additions.
    reference: bool = True
    #: Seconds the check took (host clock; informational, never asserted on).
    seconds: float = 0.0


@dataclass(frozen=True)
class ValidationReport:
    checks: tuple[CheckResult, ...]

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(c.status == "pass" for c in self.checks)

    @property
    def failure(self) -> CheckResult | None:
        return next((c for c in self.checks if c.status == "fail"), None)

    def feedback(self) -> str:
        """What the meta-LLM reads when the strategy is rejected."""
        failed = self.failure
        if failed is None:
            return ""
        return f"The strategy failed validation check '{failed.name}': {failed.detail}"

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "checks": [asdict(c) for c in self.checks]}
