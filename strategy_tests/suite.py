"""Run Valid(·): pre-filter, then every check in order inside a fresh strategy sandbox.

Like the reference, the suite stops at the first failing check (later checks are reported as
``skipped``): a failure often leaves the server dead (timeout, OOM) and the first reason is the
one the meta-LLM needs.  The report lists every check either way.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from harness.core.errors import StrategyError
from harness.evox.prefilter import prefilter
from harness.evox.records import Labels
from harness.evox.sandbox import StrategyFactory
from strategy_tests.checks import REFERENCE_CHECKS
from strategy_tests.context import ValidConfig, ValidRun
from strategy_tests.extra import EXTRA_CHECKS
from strategy_tests.report import CheckFailed, CheckResult, Status, ValidationReport

__all__ = ["CHECK_NAMES", "validate", "validate_source"]

Check = Callable[[ValidRun], Awaitable[str]]
#: Every check name in run order (``prefilter`` first, as ``validate_source`` runs it).
CHECK_NAMES = (
    "prefilter",
    "load",
    "structure",
    *(name for name, _ in REFERENCE_CHECKS),
    *(name for name, _ in EXTRA_CHECKS),
)
_EXTRA = {name for name, _ in EXTRA_CHECKS} | {"prefilter"}


def _result(name: str, status: Status, detail: str, started: float) -> CheckResult:
    return CheckResult(
        name,
        status,
        detail,
        reference=name not in _EXTRA,
        seconds=round(time.monotonic() - started, 3),
    )


def _skipped(names: tuple[str, ...] | list[str]) -> list[CheckResult]:
    return [
        CheckResult(n, "skipped", "not run: an earlier check failed", reference=n not in _EXTRA)
        for n in names
    ]


async def _load(run: ValidRun, source: str) -> list[CheckResult]:
    started = time.monotonic()
    try:
        await run.client.load(source, run.labels.as_dict(), run.config.seed)
    except StrategyError as exc:
        if exc.kind == "structure":
            return [
                _result("load", "pass", "the module imports", started),
                _result("structure", "fail", str(exc), started),
            ]
        return [_result("load", "fail", str(exc), started)]
    return [
        _result("load", "pass", "the module imports", started),
        _result(
            "structure",
            "pass",
            "classes, inheritance, abstract methods and sample() signature ok",
            started,
        ),
    ]


async def validate(
    source: str,
    *,
    factory: StrategyFactory,
    labels: Labels,
    config: ValidConfig | None = None,
) -> ValidationReport:
    """Valid(·) of ``source`` in a fresh sandbox from ``factory`` (no pre-filter)."""
    cfg = config or ValidConfig()
    client = factory.client(cfg.limits)
    results: list[CheckResult] = []
    checks: list[tuple[str, Check]] = [*REFERENCE_CHECKS, *EXTRA_CHECKS]
    started = time.monotonic()
    try:
        try:
            await client.start()
        except StrategyError as exc:
            results.append(
                _result("load", "fail", f"the strategy server did not start: {exc}", started)
            )
            return ValidationReport(tuple(results + _skipped(CHECK_NAMES[2:])))
        run = ValidRun(client, labels, cfg)
        results += await _load(run, source)
        if results[-1].status == "fail":
            rest = CHECK_NAMES[CHECK_NAMES.index(results[-1].name) + 1 :]
            return ValidationReport(tuple(results + _skipped(rest)))
        for i, (name, check) in enumerate(checks):
            started = time.monotonic()
            try:
                detail = await check(run)
            except CheckFailed as exc:
                results.append(_result(name, "fail", str(exc), started))
            except StrategyError as exc:
                results.append(_result(name, "fail", f"{exc.kind}: {exc}", started))
            else:
                results.append(_result(name, "pass", detail, started))
                continue
            results += _skipped([n for n, _ in checks[i + 1 :]])
            break
    finally:
        await client.close()
    return ValidationReport(tuple(results))


async def validate_source(
    source: str,
    *,
    factory: StrategyFactory,
    labels: Labels,
    config: ValidConfig | None = None,
    use_prefilter: bool = True,
) -> ValidationReport:
    """The pre-filter (no container if it rejects), then :func:`validate`."""
    started = time.monotonic()
    if use_prefilter:
        verdict = prefilter(source)
        if not verdict.ok:
            first = _result("prefilter", "fail", verdict.reason(), started)
            return ValidationReport((first, *_skipped(CHECK_NAMES[1:])))
        first = _result(
            "prefilter", "pass", "imports and names within the strategy policy", started
        )
    else:
        first = CheckResult("prefilter", "skipped", "pre-filter disabled", reference=False)
    report = await validate(source, factory=factory, labels=labels, config=config)
    return ValidationReport((first, *report.checks))
