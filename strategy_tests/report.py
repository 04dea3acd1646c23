"""Per-check results of Valid(·) and the text fed back to the meta-LLM when a strategy fails."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
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
    #: For a check the judge stopped: the check whose bound was crossed (e.g. ``call_time``
    #: when a ``sample`` of the stress check used too much CPU).
    cause: str | None = None


@dataclass(frozen=True)
class ValidationReport:
    checks: tuple[CheckResult, ...]
    #: What the sandbox was allowed and used, as the host read it (see ``Judge.resources``).
    resources: dict[str, Any] = field(default_factory=dict)
    #: Wall time of the whole validation, sandbox start and removal included (host clock).
    elapsed_s: float = 0.0

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(c.status == "pass" for c in self.checks)

    @property
    def failure(self) -> CheckResult | None:
        """The reason the strategy was rejected: the first failed check, or — when the judge
        stopped that check — the check whose bound it crossed."""
        first = next((c for c in self.checks if c.status == "fail"), None)
        if first is None or first.cause is None:
            return first
        return next((c for c in self.checks if c.name == first.cause), first)

    def check(self, name: str) -> CheckResult:
        return next(c for c in self.checks if c.name == name)

    def feedback(self) -> str:
        """What the meta-LLM reads when the strategy is rejected."""
        failed = self.failure
        if failed is None:
            return ""
        return f"The strategy failed validation check '{failed.name}': {failed.detail}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "checks": [asdict(c) for c in self.checks],
            "resources": self.resources,
            "elapsed_s": round(self.elapsed_s, 3),
        }
