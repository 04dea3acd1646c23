"""Verdicts of ``task check`` on sandbox results: the seed, determinism, the variants, the liar.

Each function turns what came back from the sandbox into one :class:`CheckResult`; none runs
anything.  A result is a failure exactly when the sandbox says so or the metrics match
:func:`harness.core.scoring.is_failure`, the predicate the whole harness uses.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from harness.core.records import EvalResult
from harness.core.scoring import get_score, is_failure, numeric_metrics
from harness.evaluation.check._report import CheckResult
from harness.evaluation.check._variants import (
    ABSENT_PART_MARKER,
    NO_REPORTED_VALUE_MARKER,
    PARTIAL_NAN_VARIANTS,
    VARIANTS,
)
from harness.evaluation.task import Task

__all__ = [
    "brief",
    "determinism_check",
    "failed",
    "lying_check",
    "seed_check",
    "variant_check",
]

#: Metric names that legitimately differ between runs (timings) and are not compared.
_TIMING = re.compile(r"time|duration|elapsed|seconds|latency", re.IGNORECASE)


def failed(result: EvalResult) -> bool:
    """Whether the result is a failure: a non-ok sandbox status or the failure predicate."""
    return result.status != "ok" or is_failure(result.metrics, result.artifacts)


def brief(result: EvalResult) -> str:
    """One line on how a job ended, for check details."""
    if failed(result):
        reason = result.error.strip().splitlines()[0] if result.error.strip() else ""
        return f"{result.status}: {reason[:160]}" if reason else result.status
    return f"{result.status}, combined_score={get_score(result.metrics):.6g}"


def _comparable(metrics: Mapping[str, Any]) -> dict[str, float]:
    return {k: v for k, v in numeric_metrics(metrics).items() if not _TIMING.search(k)}


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def seed_check(task: Task, result: EvalResult) -> CheckResult:
    """``seed_evaluates``: valid, within budget, the declared metrics, not above the best known."""
    card = task.card
    data = {"duration_s": round(result.duration_s, 3), "metrics": dict(result.metrics)}
    if failed(result):
        return CheckResult(
            "seed_evaluates", "fail", f"the seed program fails: {brief(result)}", data
        )
    problems: list[str] = []
    nums = numeric_metrics(result.metrics)
    if "combined_score" not in nums:
        problems.append("no numeric 'combined_score' metric")
    required = (
        [] if card.mode == "compat" else ["validity", *([card.metric] if card.metric else [])]
    )
    for key in required:
        if key not in nums:
            problems.append(f"no numeric {key!r} metric")
    if "validity" in nums and nums["validity"] != 1.0:
        problems.append(f"validity is {nums['validity']:g}, expected 1.0")
    if result.duration_s > card.limits.wall_s:
        problems.append(f"took {result.duration_s:.1f} s, over the {card.limits.wall_s:g} s budget")
    bk = card.best_known
    if bk is not None and bk.combined_score is not None and "combined_score" in nums:
        if nums["combined_score"] > bk.combined_score * (1 + 1e-9) + 1e-12:
            problems.append(
                f"the seed scores {nums['combined_score']:.9g}, above the best known "
                f"{bk.combined_score:.9g}: is the normalisation right?"
            )
    if problems:
        return CheckResult("seed_evaluates", "fail", "; ".join(problems), data)
    extra = "" if card.mode == "sealed" else " (compat: 'validity' and the metric are optional)"
    return CheckResult(
        "seed_evaluates",
        "pass",
        f"combined_score={nums['combined_score']:.6g} in {result.duration_s:.2f} s "
        f"(budget {card.limits.wall_s:g} s){extra}",
        data,
    )


def determinism_check(results: Sequence[EvalResult]) -> CheckResult:
    """``deterministic``: every run ended alike with identical metrics (timings aside)."""
    first = results[0]
    base = _comparable(first.metrics)
    for i, other in enumerate(results[1:], start=2):
        if other.status != first.status:
            return CheckResult(
                "deterministic", "fail", f"run 1 ended {first.status}, run {i} ended {other.status}"
            )
        metrics = _comparable(other.metrics)
        if set(metrics) != set(base):
            return CheckResult(
                "deterministic",
                "fail",
                f"run {i} reports metrics {sorted(metrics)}, run 1 {sorted(base)}",
            )
        diff = [k for k in base if not _same(base[k], metrics[k])]
        if diff:
            k = diff[0]
            return CheckResult(
                "deterministic",
                "fail",
                f"{k} differs between runs ({base[k]!r} vs {metrics[k]!r}); fix the seeds of "
                "every random choice in the evaluator and the seed program",
            )
    ignored = sorted(k for k in numeric_metrics(first.metrics) if _TIMING.search(k))
    note = f"; timing metrics not compared: {', '.join(ignored)}" if ignored else ""
    return CheckResult("deterministic", "pass", f"{len(results)} runs, identical metrics{note}")


def variant_check(kind: str, result: EvalResult, seed_score: float) -> CheckResult:
    """``rejects_<kind>``: the adversarial variant scored as a failure."""
    name = f"rejects_{kind}"
    what = VARIANTS[kind]
    data = {"status": result.status, "metrics": dict(result.metrics)}
    if failed(result):
        return CheckResult(name, "pass", f"{what} → {brief(result)}", data)
    if kind in PARTIAL_NAN_VARIANTS and ABSENT_PART_MARKER in result.stderr_tail:
        part = PARTIAL_NAN_VARIANTS[kind]
        return CheckResult(
            name, "skip", f"the answer has fewer than {part} list/array part(s) to poison", data
        )
    score = get_score(result.metrics)
    worse = " — ABOVE the seed" if score > seed_score else ""
    if kind == "reads_task_files":
        tail = result.stderr_tail.strip().splitlines()[-1:] if result.stderr_tail else []
        return CheckResult(
            name,
            "fail",
            "a candidate could read the trusted task files "
            f"({tail[0][:200] if tail else 'path not reported'}); the sandbox leaks them",
            data,
        )
    return CheckResult(
        name,
        "fail",
        f"{what}, yet it scored as a success (combined_score={score:.6g}, seed "
        f"{seed_score:.6g}){worse}: the evaluator must reject it (validity 0 with an error)",
        data,
    )


def lying_check(results: Mapping[str, EvalResult], seed_score: float, scalars: int) -> CheckResult:
    """``recomputes_reported``: no lie about reported values raised the score.

    ``results`` maps a lie to its result: ``gross`` (every reported scalar inflated) and the
    relative sizes of the small lies about the answer's last value (``1e-09`` …), which catch an
    evaluator that takes the reported value when it is "close enough" to its own.
    """
    name = "recomputes_reported"
    data: dict[str, Any] = {
        "scalars": scalars,
        "lies": {k: {"status": r.status, "metrics": dict(r.metrics)} for k, r in results.items()},
    }
    told: list[str] = []
    for label, result in results.items():
        what = (
            f"inflating the {scalars} scalar(s) the entry point reports"
            if label == "gross"
            else f"moving the answer's last value by {label} (relative) in the flattering way"
        )
        if result.status not in ("ok", "invalid"):
            return CheckResult(
                name,
                "fail",
                f"inconclusive: the lie '{label}' did not finish ({brief(result)})",
                data,
            )
        if label != "gross" and NO_REPORTED_VALUE_MARKER in result.stderr_tail:
            told.append(f"{label}: n/a (the answer is not data followed by a reported number)")
            continue
        if is_failure(result.metrics, result.artifacts):
            told.append(f"{label}: rejected")
            continue
        score = get_score(result.metrics)
        if score > seed_score + 1e-12 * max(1.0, abs(seed_score)):
            return CheckResult(
                name,
                "fail",
                f"{what} raised combined_score from {seed_score:.12g} to {score:.12g}: the "
                "evaluator trusts a value the program reports instead of recomputing it from the "
                "returned data",
                data,
            )
        told.append(f"{label}: {score:.9g}")
    return CheckResult(
        name,
        "pass",
        f"lies about reported values never beat the seed ({seed_score:.9g}): " + "; ".join(told),
        data,
    )
