"""``check_task``: runs the static checks, then every sandbox job of the battery, then the verdicts.

All candidate-side work goes through the evaluator driver (one sandbox job per cascade stage),
except the probe, a trusted one-job evaluator of its own.  Jobs share one backend and run
concurrently under a small limit; the verdicts are recorded in a fixed order whatever order the
jobs finish in.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Protocol

from harness.core.records import EvalResult
from harness.core.scoring import get_score, numeric_metrics
from harness.evaluation.check._report import CheckReport, CheckResult
from harness.evaluation.check._static import (
    card_check,
    files_check,
    folder_config_check,
    hidden_data_check,
    infer_entry_point,
    lie_precondition,
)
from harness.evaluation.check._variants import (
    HANGING_VARIANTS,
    ISOLATION_VARIANTS,
    PROBE_MODULE,
    PROBE_SOURCE,
    SMALL_LIES,
    VARIANTS,
    lying_source,
    variant_source,
)
from harness.evaluation.check._verdicts import (
    brief,
    determinism_check,
    failed,
    lying_check,
    seed_check,
    variant_check,
)
from harness.evaluation.task import Task, TaskLimits, load_task
from harness.sandbox.protocol import Job, SandboxBackend

__all__ = [
    "DEFAULT_RUNS",
    "HANG_WALL_S",
    "UNISOLATED_BACKENDS",
    "EvaluatorFactory",
    "TaskEvaluatorLike",
    "check_task",
]

#: Runs of the seed compared by the determinism check (the first is the seed check's own run).
DEFAULT_RUNS = 3
#: Budget of the variants that never return: any budget shows a timeout is a failure, and a
#: short one keeps the whole check quick.  Every other variant gets the card's budget, so a
#: variant that runs the seed is never cut short (which would hide what the evaluator does).
HANG_WALL_S = 3.0
#: Backends whose candidates are not isolated from the runner and the task files.
UNISOLATED_BACKENDS = frozenset({"local"})


class TaskEvaluatorLike(Protocol):
    async def evaluate(self, code: str, *, program_id: str, iteration: int) -> EvalResult: ...


EvaluatorFactory = Callable[[Task, SandboxBackend], TaskEvaluatorLike]


def _default_factory(task: Task, backend: SandboxBackend) -> TaskEvaluatorLike:
    from harness.evaluation.driver import TaskEvaluator

    # The caller owns the backend: several evaluators (full and short budgets) share it.
    return TaskEvaluator(task, backend, close_backend=False)


def _with_limits(task: Task, wall_s: float) -> Task:
    limits = task.card.limits.model_dump()
    limits["wall_s"] = wall_s
    card = task.card.model_copy(update={"limits": TaskLimits(**limits)})
    return replace(task, card=card)


class _Jobs:
    """The check's sandbox work on one backend: an evaluator per budget, a shared limit."""

    def __init__(self, backend: SandboxBackend, factory: EvaluatorFactory, limit: int) -> None:
        self.backend = backend
        self.factory = factory
        self.limit = asyncio.Semaphore(limit)
        self.evaluators: dict[float, TaskEvaluatorLike] = {}

    async def evaluate(
        self, task: Task, code: str, label: str, *, limited: bool = True
    ) -> EvalResult:
        """Score ``code`` under ``task``'s budget (one evaluator per distinct budget)."""
        key = task.card.limits.wall_s
        if key not in self.evaluators:
            self.evaluators[key] = self.factory(task, self.backend)
        evaluator = self.evaluators[key]
        if not limited:
            return await evaluator.evaluate(code, program_id=f"check-{label}", iteration=0)
        async with self.limit:
            return await evaluator.evaluate(code, program_id=f"check-{label}", iteration=0)

    async def probe(self, task: Task, entry: str) -> EvalResult:
        """Run the trusted probe evaluator on the seed (one job, the card's budget)."""
        job = Job(
            mode="sealed",
            function="evaluate",
            candidate=task.initial_program or "",
            files={f"{PROBE_MODULE}.py": PROBE_SOURCE.format(entry=entry).encode()},
            evaluator_module=PROBE_MODULE,
            limits=task.card.limits.to_limits(),
            image=task.card.image,
            preload=task.card.preload,
        )
        return await self.backend.run(job)

    async def aclose(self) -> None:
        for evaluator in self.evaluators.values():
            close = getattr(evaluator, "aclose", None)
            if close is not None:
                await close()


@dataclass(frozen=True)
class _Lie:
    """What the probe found, and the lying variants' results (label → result)."""

    scalars: int
    skip: str = ""
    results: dict[str, EvalResult] = field(default_factory=dict)


async def _probe_then_lie(jobs: _Jobs, task: Task, entry: str) -> _Lie:
    # The gross lie needs reported scalars to inflate, so the probe counts them first; chained
    # here, the lot overlaps the battery instead of running after it.  The small lies (about
    # the answer's last value only) say themselves when they do not apply.
    seed = task.initial_program or ""
    direction = task.card.direction
    answer = await jobs.probe(task, entry)
    if failed(answer):
        return _Lie(-1, f"could not inspect the seed's answer ({brief(answer)})")
    scalars = int(numeric_metrics(answer.metrics).get("scalars", 0))
    if scalars == 0:
        return _Lie(0, f"{entry}() returns only arrays: there is no reported value to inflate")
    codes = {"gross": lying_source(seed, entry, direction)}
    for rel in SMALL_LIES:
        codes[f"{rel:g}"] = lying_source(seed, entry, direction, rel)
    done = await asyncio.gather(
        *(jobs.evaluate(task, code, f"lying-{label}") for label, code in codes.items())
    )
    return _Lie(scalars, results=dict(zip(codes, done, strict=True)))


async def _no_lie(reason: str) -> _Lie:
    return _Lie(0, reason)


def _skipped_variants(task: Task, backend: SandboxBackend, entry: str | None) -> dict[str, str]:
    """Variant → why it cannot be checked here (absent when it can)."""
    isolated = getattr(backend, "name", "") not in UNISOLATED_BACKENDS
    skipped: dict[str, str] = {}
    for kind in VARIANTS:
        if entry is None and kind != "syntax_error":
            skipped[kind] = "no entry point: the card names none and none could be inferred"
        elif kind in ISOLATION_VARIANTS and task.card.mode == "compat":
            skipped[kind] = (
                "compat mode: the evaluator imports the candidate into its own "
                "process, so isolation from it cannot be checked"
            )
        elif kind in ISOLATION_VARIANTS and not isolated:
            skipped[kind] = (
                f"the {backend.name!r} backend does not isolate the candidate "
                "(run with --sandbox docker)"
            )
    return skipped


async def check_task(
    target: str | os.PathLike[str] | Task,
    backend: SandboxBackend,
    *,
    runs: int = DEFAULT_RUNS,
    concurrency: int | None = None,
    evaluator_factory: EvaluatorFactory | None = None,
    progress: Callable[[CheckResult], None] | None = None,
) -> CheckReport:
    """Run every check on a task folder (or loaded task) with ``backend``; see the package doc.

    ``concurrency`` caps the jobs in flight (default: twice the CPUs, between 2 and 6);
    ``progress`` sees each check as it is recorded.  Raises
    :class:`~harness.core.errors.TaskError` when the folder is not a task at all.
    """
    task = target if isinstance(target, Task) else load_task(target)
    card = task.card
    checks: list[CheckResult] = []

    def record(check: CheckResult) -> None:
        checks.append(check)
        if progress is not None:
            progress(check)

    entry = card.entry_point or (infer_entry_point(task) if card.mode == "compat" else None)
    record(card_check(task))
    if card.mode == "compat":
        record(folder_config_check(task))
    files = files_check(task, entry)
    record(files)
    record(hidden_data_check(task))
    if files.status == "fail" or task.initial_program is None:
        record(CheckResult("seed_evaluates", "skip", "the static checks failed"))
    else:
        # Jobs spend much of their time starting a sandbox, so a little oversubscription pays.
        limit = concurrency or max(2, min(6, 2 * (os.cpu_count() or 1)))
        jobs = _Jobs(backend, evaluator_factory or _default_factory, limit)
        try:
            await _sandbox_checks(task, backend, entry, jobs, record, runs)
        finally:
            await jobs.aclose()
    return CheckReport(
        task=card.name,
        path=str(task.path),
        mode=card.mode,
        sandbox=getattr(backend, "name", "?"),
        checks=tuple(checks),
    )


async def _sandbox_checks(
    task: Task,
    backend: SandboxBackend,
    entry: str | None,
    jobs: _Jobs,
    record: Callable[[CheckResult], None],
    runs: int,
) -> None:
    card = task.card
    seed_code = task.initial_program or ""
    short = _with_limits(task, min(card.limits.wall_s, HANG_WALL_S))
    skipped = _skipped_variants(task, backend, entry)
    seeds = [f"seed-{i}" for i in range(1, max(runs, 2) + 1)]
    # The hanging variants start first and outside the concurrency limit: each lasts its fixed
    # short budget whatever the load (one of them sleeping through it), so they overlap the
    # battery instead of holding two of its slots or trailing it.  Then the longest jobs (the
    # seed's runs) ahead of the variants, most of which end early.
    pending: dict[str, Awaitable[EvalResult]] = {}
    for kind in sorted(HANGING_VARIANTS - set(skipped)):
        code = variant_source(seed_code, entry or "", kind, task_files=task.files)
        pending[kind] = jobs.evaluate(short, code, kind, limited=False)
    for label in seeds:
        pending[label] = jobs.evaluate(task, seed_code, label)
    for kind in VARIANTS:
        if kind not in skipped and kind not in HANGING_VARIANTS:
            code = variant_source(seed_code, entry or "", kind, task_files=task.files)
            pending[kind] = jobs.evaluate(task, code, kind)
    lie_skip = lie_precondition(seed_code, entry)
    lie_job = _probe_then_lie(jobs, task, entry or "") if not lie_skip else _no_lie(lie_skip)

    # Everything at once (the seed's own runs too): when the seed fails, the rest is discarded,
    # which costs a little in that rare case and saves a seed's run time in every other.
    done, lie = await asyncio.gather(asyncio.gather(*pending.values()), lie_job)
    results = dict(zip(pending, done, strict=True))
    seed_runs = [results[label] for label in seeds]
    record(seed_check(task, seed_runs[0]))
    if failed(seed_runs[0]):
        for name in ("deterministic", *(f"rejects_{k}" for k in VARIANTS), "recomputes_reported"):
            record(CheckResult(name, "skip", "the seed does not evaluate"))
        return
    seed_score = get_score(seed_runs[0].metrics)
    record(determinism_check(seed_runs))
    for kind in VARIANTS:
        if kind in skipped:
            record(CheckResult(f"rejects_{kind}", "skip", skipped[kind]))
        else:
            record(variant_check(kind, results[kind], seed_score))
    if not lie.results:
        record(CheckResult("recomputes_reported", "skip", lie.skip))
    else:
        record(lying_check(lie.results, seed_score, lie.scalars))
