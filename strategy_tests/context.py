"""What one Valid(·) run shares between checks: the judged client and the host's canonical copies.

Checks drive the strategy through the same RPC client the runtime uses, so what is validated is
the code, the server and the sandbox that get deployed.  Every call goes through the
:class:`~strategy_tests.judge.Judge`.  The host keeps its own deep copy of every program it sends
(id and metrics) *before* sending it; the server in the sandbox only reports what the strategy
holds and returns, and every comparison — returned ids, fabricated programs, metrics left
unchanged — is made here, against those copies.  A strategy that rewrites the scores it was given
(or anything in its own process) cannot make a comparison see its own values twice.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from strategy_tests.judge import Judge
from strategy_tests.report import CheckFailed

if TYPE_CHECKING:
    from scaffolds.evox.client import StrategyClient
    from scaffolds.evox.records import Labels
    from scaffolds.evox.valid import ValidConfig

__all__ = ["SampleView", "ValidRun", "metric_changes"]

_SHOWN = 80


@dataclass(frozen=True)
class SampleView:
    """One ``sample`` answer: (token, id) pairs plus what the host found wrong with it."""

    parent: tuple[str, str]
    context: tuple[tuple[str, str], ...]
    issues: tuple[str, ...]

    @property
    def ids(self) -> list[str]:
        return [self.parent[1], *(pid for _, pid in self.context)]


def _same(original: Any, seen: Any) -> bool:
    numbers = (int, float)
    if isinstance(original, numbers) and isinstance(seen, numbers):
        a, b = float(original), float(seen)
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b or abs(a - b) <= 1e-10  # the reference's tolerance
    return type(original) is type(seen) and original == seen


def _shown(value: Any) -> str:
    if isinstance(value, dict) and set(value) == {"repr", "type"}:
        return f"a {value['type']} ({str(value['repr'])[:_SHOWN]})"
    return repr(value)[:_SHOWN]


def metric_changes(original: dict[str, Any], seen: Any, where: str, pid: str) -> list[str]:
    """Every metric the host sent must still be there with the same value (numbers within
    1e-10, NaN equal to NaN).  ``seen`` is the server's observation (see ``plain_metrics``)."""
    if not (isinstance(seen, dict) and seen.get("type") == "dict"):
        kind = seen.get("type") if isinstance(seen, dict) else type(seen).__name__
        return [f"{where}: metrics of {pid!r} are a {kind}, not a dict"]
    items = seen.get("items")
    items = items if isinstance(items, dict) else {}
    issues = []
    for key, value in original.items():
        if key not in items:
            issues.append(f"{where}: metric {key!r} of {pid!r} was deleted")
        elif not _same(value, items[key]):
            issues.append(
                f"{where}: metric {key!r} of {pid!r} changed from {value!r} to {_shown(items[key])}"
            )
    return issues


class ValidRun:
    def __init__(
        self, client: StrategyClient, labels: Labels, config: ValidConfig, judge: Judge
    ) -> None:
        self.client = client
        self.labels = labels
        self.config = config
        self.judge = judge
        #: handle → id → metrics as the host sent them (its own copies, in order of adding).
        self.added: dict[str, dict[str, dict[str, Any]]] = {}
        self.answers: list[SampleView] = []

    # -- judged operations ---------------------------------------------------------------------
    async def load(self, source: str) -> None:
        await self.judge.call(
            "load()",
            lambda d: self.client.load(
                source, self.labels.as_dict(), self.config.seed, deadline_s=d
            ),
        )

    async def new(self, handle: str, name: str | None = None, config: str = "base") -> None:
        await self.judge.call(
            "__init__()",
            lambda d: self.client.new(handle, name=name or handle, config=config, deadline_s=d),
        )
        self.added[handle] = {}

    async def count(self, handle: str) -> int:
        return await self.judge.call(
            "len(self.programs)", lambda d: self.client.count(handle, deadline_s=d)
        )

    async def reseed(self, seed: int) -> None:
        await self.judge.call("reseed", lambda d: self.client.reseed(seed, deadline_s=d))

    async def drop(self, handle: str) -> None:
        await self.judge.call("drop", lambda d: self.client.drop(handle, deadline_s=d))

    async def add(
        self, handle: str, records: list[dict[str, Any]], *, base: bool = False, check: bool = True
    ) -> None:
        sent = {r["id"]: copy.deepcopy(r["metrics"]) for r in records}  # before anything leaves
        result = await self.judge.call(
            "add()",
            lambda d: self.client.add(records, handle=handle, base=base, check=check, deadline_s=d),
        )
        self.added[handle].update(sent)
        if check:
            issues = self._add_issues(records, result, sent)
            if issues:
                raise CheckFailed("; ".join(issues[:3]))

    def _add_issues(
        self, records: list[dict[str, Any]], result: dict[str, Any], sent: dict[str, Any]
    ) -> list[str]:
        ids, observed = result.get("ids") or [], result.get("observed") or []
        if len(ids) != len(records) or len(observed) != len(records):
            return ["the strategy server answered add() for the wrong number of programs"]
        issues: list[str] = []
        for record, returned, seen in zip(records, ids, observed, strict=True):
            pid = record["id"]
            if returned != pid:
                issues.append(f"add() returned {returned!r}, expected the program's id {pid!r}")
                continue
            if not isinstance(seen, dict) or seen.get("stored") is None:
                issues.append(f"get({pid!r}) found nothing right after add()")
                continue
            issues += metric_changes(sent[pid], seen["stored"], "add() (stored)", pid)
            issues += metric_changes(sent[pid], seen.get("given"), "add() (original object)", pid)
        return issues

    async def sample(self, handle: str, k: int, *, check: bool = True) -> SampleView:
        result = await self.judge.call(
            "sample()",
            lambda d: self.client.sample(k, handle=handle, check=check, deadline_s=d),
        )
        parent = result.get("parent") or ("", "")
        context = tuple((str(c[0]), str(c[1])) for c in result.get("context") or [])
        view = SampleView((str(parent[0]), str(parent[1])), context, ())
        if check:
            view = SampleView(
                view.parent, view.context, tuple(self._sample_issues(handle, view, result))
            )
        self.answers.append(view)
        return view

    def _sample_issues(self, handle: str, view: SampleView, result: dict[str, Any]) -> list[str]:
        sent = self.added[handle]
        observed = result.get("observed")
        if (
            not isinstance(observed, list)
            or [o.get("id") if isinstance(o, dict) else None for o in observed] != view.ids
        ):
            return ["the strategy server's observations do not match its answer"]
        issues: list[str] = []
        for i, seen in enumerate(observed):
            role = "parent" if i == 0 else "context program"
            pid = view.ids[i]
            if pid not in sent:
                issues.append(f"the {role} {pid[:_SHOWN]!r} was never added (fabricated program)")
                continue
            if not seen.get("member"):
                issues.append(f"the {role} {pid!r} is not in self.programs")
            if seen.get("stored") is None:
                issues.append(f"get({pid!r}) finds no {role} with that id")
            else:
                issues += metric_changes(
                    sent[pid], seen["stored"], f"sample() ({role} stored)", pid
                )
            issues += metric_changes(
                sent[pid], seen.get("returned"), f"sample() ({role} returned)", pid
            )
        return issues

    async def reference_sample(
        self, handle: str, k: int, where: str, *, check: bool = True
    ) -> SampleView:
        """One ``sample`` with the reference's checks: shape (the server's normalisation), one
        parent, no fabricated ids, every program stored and unchanged, context ≤ min(k, n)."""
        view = await self.sample(handle, k, check=check)
        if view.issues:
            raise CheckFailed(f"{where}: " + "; ".join(view.issues[:3]))
        known = self.added[handle]
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
