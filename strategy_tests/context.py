"""The state one Valid(·) run shares between checks: the client and what each instance holds.

Checks drive the strategy through the same RPC client the runtime uses, so what is validated
is the code, the server and the container that get deployed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.evox.client import StrategyClient
from harness.evox.records import Labels
from harness.evox.sandbox import ContainerLimits
from strategy_tests.report import CheckFailed

__all__ = ["SampleView", "ValidConfig", "ValidRun"]


@dataclass(frozen=True)
class ValidConfig:
    #: Programs added one by one in the stress check, with a ``sample`` every ``stress_every``.
    stress_programs: int = 1000
    stress_every: int = 10
    #: Slowest ``add``/``sample`` allowed (time inside the strategy, not the transport).
    max_call_s: float = 1.0
    #: Peak resident memory of the strategy server after the stress check.
    max_rss_mb: int = 256
    determinism_samples: int = 8
    #: The validation container (its per-call deadline is what "hangs" run into).
    limits: ContainerLimits = field(
        default_factory=lambda: ContainerLimits(memory_mb=512, call_s=10.0, bulk_s=60.0)
    )
    seed: int = 1234


@dataclass(frozen=True)
class SampleView:
    """One ``sample`` answer: (token, id) pairs plus the server's own membership findings."""

    parent: tuple[str, str]
    context: tuple[tuple[str, str], ...]
    issues: tuple[str, ...]

    @property
    def ids(self) -> list[str]:
        return [self.parent[1], *(pid for _, pid in self.context)]


class ValidRun:
    def __init__(self, client: StrategyClient, labels: Labels, config: ValidConfig) -> None:
        self.client = client
        self.labels = labels
        self.config = config
        #: handle → ids added (in order).
        self.added: dict[str, list[str]] = {}
        self.answers: list[SampleView] = []
        self.slowest: tuple[float, str] = (0.0, "")

    def _time(self, seconds: Any, what: str) -> None:
        if isinstance(seconds, int | float) and seconds > self.slowest[0]:
            self.slowest = (float(seconds), what)

    async def new(self, handle: str, name: str | None = None, config: str = "base") -> None:
        await self.client.new(handle, name=name or handle, config=config)
        self.added[handle] = []

    async def add(
        self, handle: str, records: list[dict[str, Any]], *, base: bool = False, check: bool = True
    ) -> None:
        result = await self.client.add(records, handle=handle, base=base, check=check)
        self._time(result.get("elapsed"), "add")
        self.added[handle].extend(r["id"] for r in records)
        issues = result.get("issues") or []
        if issues:
            raise CheckFailed("; ".join(str(i) for i in issues[:3]))

    async def sample(self, handle: str, k: int, *, check: bool = True) -> SampleView:
        result = await self.client.sample(k, handle=handle, check=check)
        self._time(result.get("elapsed"), "sample")
        parent = tuple(result.get("parent") or ("", ""))
        view = SampleView(
            parent=(str(parent[0]), str(parent[1])),
            context=tuple((str(c[0]), str(c[1])) for c in result.get("context") or []),
            issues=tuple(str(i) for i in result.get("issues") or []),
        )
        self.answers.append(view)
        return view

    async def reference_sample(
        self, handle: str, k: int, where: str, *, check: bool = True
    ) -> SampleView:
        """One ``sample`` with the reference's checks: shape (done by the server), exactly one
        parent, no fabricated ids, every program stored and unchanged, context ≤ min(k, n)."""
        view = await self.sample(handle, k, check=check)
        if view.issues:
            raise CheckFailed(f"{where}: " + "; ".join(view.issues[:3]))
        known = set(self.added[handle])
        fabricated = [pid for pid in view.ids if pid not in known]
        if fabricated:
            raise CheckFailed(
                f"{where}: sample() returned programs that were never added: {fabricated[:3]}"
            )
        limit = min(k, len(known))
        if len(view.context) > limit:
            raise CheckFailed(
                f"{where}: sample(num_context_programs={k}) returned {len(view.context)} context "
                f"programs; at most {limit} are possible with {len(known)} programs"
            )
        return view
