"""Run Valid(·): the pre-filter (when given), then every check in order in a fresh strategy sandbox.

    clients = lambda: factory.client(config.limits)       # a StrategyClient factory
    report = await validate(source, clients=clients, labels=labels, config=config)
    report = await validate_source(source, clients=clients, labels=labels, config=config,
                                   gate=prefilter)        # the static gate first

Like the reference, the suite stops at the first failing check (later checks are reported as
``skipped``): a failure often leaves the server dead (timeout, OOM) and the first reason is the
one the meta-LLM needs.  When the judge stops a check for crossing a bound (CPU per call,
memory, tasks), the bound's own check is reported failed too and named as the check's
``cause``.  The whole run — sandbox start, every check, removal — ends within
``config.deadline_s``; each check has its own budget.

The suite imports nothing from ``scaffolds.evox`` at run time: the caller hands it a factory of
:class:`~scaffolds.evox.client.StrategyClient` (one per validation, not yet started), the config
and, for :func:`validate_source`, the static gate.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

from harness.core.errors import StrategyError
from strategy_tests.checks import REFERENCE_CHECKS
from strategy_tests.context import ValidRun
from strategy_tests.extra import EXTRA_CHECKS
from strategy_tests.judge import CLOSE_MARGIN_S, Judge, LimitExceeded
from strategy_tests.report import CheckFailed, CheckResult, Status, ValidationReport

if TYPE_CHECKING:
    from scaffolds.evox.client import StrategyClient
    from scaffolds.evox.records import Labels
    from scaffolds.evox.valid import ValidConfig

__all__ = ["CHECK_NAMES", "ClientFactory", "Gate", "validate", "validate_source"]

Check = Callable[[ValidRun], Awaitable[str]]
ClientFactory = Callable[[], "StrategyClient"]


class GateVerdict(Protocol):
    @property
    def ok(self) -> bool: ...

    def reason(self) -> str: ...


#: The static gate (``scaffolds.evox.prefilter.prefilter``), injected by the caller.
Gate = Callable[[str], GateVerdict]

#: Every check name in run order (``prefilter`` first, as ``validate_source`` runs it).
CHECK_NAMES = (
    "prefilter",
    "load",
    "structure",
    *(name for name, _ in REFERENCE_CHECKS),
    *(name for name, _ in EXTRA_CHECKS),
)
_EXTRA = {name for name, _ in EXTRA_CHECKS} | {"prefilter"}
#: Bounds the judge enforces on every call; each is also a check of its own.
_BOUNDS = frozenset({"call_time", "memory", "threads"})


class _Results:
    """Results by check name; :meth:`report` lists every check in order, the rest skipped."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names
        self.by_name: dict[str, CheckResult] = {}

    def add(
        self, name: str, status: Status, detail: str, started: float, cause: str | None = None
    ) -> None:
        self.by_name[name] = CheckResult(
            name,
            status,
            detail,
            reference=name not in _EXTRA,
            seconds=round(time.monotonic() - started, 3),
            cause=cause,
        )

    def stopped(self, name: str, exc: StrategyError, started: float) -> None:
        """``name`` failed with ``exc``; a crossed bound fails its own check too."""
        if isinstance(exc, LimitExceeded) and exc.limit in _BOUNDS and exc.limit != name:
            self.add(name, "fail", f"stopped by the {exc.limit} limit: {exc}", started, exc.limit)
            self.add(exc.limit, "fail", str(exc), started)
        elif isinstance(exc, LimitExceeded):
            self.add(name, "fail", str(exc), started)
        else:
            self.add(name, "fail", f"{exc.kind}: {exc}", started)

    def report(self, judge: Judge, started: float) -> ValidationReport:
        checks = tuple(
            self.by_name.get(n)
            or CheckResult(n, "skipped", "not run: an earlier check failed", n not in _EXTRA)
            for n in self.names
        )
        return ValidationReport(checks, judge.resources(), time.monotonic() - started)


async def _load(run: ValidRun, results: _Results, source: str) -> bool:
    started = time.monotonic()
    run.judge.begin("load")
    try:
        await run.load(source)
    except StrategyError as exc:
        if exc.kind == "structure":
            results.add("load", "pass", "the module imports", started)
            results.add("structure", "fail", str(exc), started)
        elif exc.kind == "load":
            results.add("load", "fail", str(exc), started)
        else:
            results.stopped("load", exc, started)
        return False
    results.add("load", "pass", "the module imports", started)
    results.add(
        "structure",
        "pass",
        "classes, inheritance, abstract methods and sample() signature ok",
        started,
    )
    return True


async def _checks(run: ValidRun, results: _Results) -> None:
    for name, check in [*REFERENCE_CHECKS, *EXTRA_CHECKS]:
        started = time.monotonic()
        run.judge.begin(name)
        try:
            detail = await check(run)
        except CheckFailed as exc:
            results.add(name, "fail", str(exc), started)
        except StrategyError as exc:
            results.stopped(name, exc, started)
        else:
            results.add(name, "pass", detail, started)
            continue
        return


async def validate(
    source: str,
    *,
    clients: ClientFactory,
    labels: Labels,
    config: ValidConfig,
) -> ValidationReport:
    """Valid(·) of ``source`` in a fresh sandbox from ``clients()`` (no pre-filter)."""
    started = time.monotonic()
    judge = Judge(config, started)
    results = _Results(CHECK_NAMES[1:])
    client = clients()
    try:
        # Every call's deadline already ends by the judge's deadline; this scope is the backstop
        # for anything else that could stall (a slow engine answering a start or a reading).
        async with asyncio.timeout(config.deadline_s - CLOSE_MARGIN_S + 1.0):
            try:
                await client.start(deadline_s=min(client.start_s, judge.left(overall=True)))
            except StrategyError as exc:
                results.add("load", "fail", f"the strategy server did not start: {exc}", started)
                return results.report(judge, started)
            judge.attach(client)
            run = ValidRun(client, labels, config, judge)
            if await _load(run, results, source):
                await _checks(run, results)
    except TimeoutError:
        stopped = judge.out_of_time()
        await client.kill(stopped)
        results.add(judge.check or "load", "fail", str(stopped), started)
    finally:
        await client.close()
    return results.report(judge, started)


async def validate_source(
    source: str,
    *,
    clients: ClientFactory,
    labels: Labels,
    config: ValidConfig,
    gate: Gate | None,
) -> ValidationReport:
    """The static ``gate`` (no sandbox if it rejects; ``None`` skips it), then :func:`validate`."""
    started = time.monotonic()
    if gate is not None:
        verdict = gate(source)
        if not verdict.ok:
            failed = CheckResult(
                "prefilter",
                "fail",
                verdict.reason(),
                reference=False,
                seconds=round(time.monotonic() - started, 3),
            )
            skipped = tuple(
                CheckResult(n, "skipped", "not run: an earlier check failed", n not in _EXTRA)
                for n in CHECK_NAMES[1:]
            )
            return ValidationReport((failed, *skipped), {}, time.monotonic() - started)
        first = CheckResult(
            "prefilter",
            "pass",
            "imports, names and attributes within the strategy policy",
            reference=False,
            seconds=round(time.monotonic() - started, 3),
        )
    else:
        first = CheckResult("prefilter", "skipped", "pre-filter disabled", reference=False)
    report = await validate(source, clients=clients, labels=labels, config=config)
    return ValidationReport((first, *report.checks), report.resources, time.monotonic() - started)
