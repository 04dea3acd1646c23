"""Checks the reference's Valid(·) lacks (§2.6.3 "Not checked"), added by Galapagos.

Policy decisions they encode:

- ``empty_population``: the host never asks a strategy to sample an empty population, but a
  strategy must not die on it: *raising* (e.g. ``ValueError("no candidates")``) or returning an
  answer without a parent is fine; killing the server, hanging, or naming a program is not.
- ``single_program``: with one program, ``sample`` must succeed with that program as the
  parent and an empty context (the parent is never its own context).
- ``labels``: the parent label is "", ``self.DIVERGE_LABEL`` or ``self.REFINE_LABEL``; context
  labels are always "" (the rule the strategy prompt states; the reference accepts anything).
- ``determinism``: after ``random``/``numpy.random`` are reseeded alike, two fresh instances fed
  the same programs must give the same answers (a resumed run replays a strategy's calls).
- ``call_time``/``memory``/``threads``: CPU per call, the sandbox's memory high-water mark and
  its threads and processes.  The judge (:mod:`strategy_tests.judge`) enforces them on every
  call from the first one, reading the kernel's counters from the host; a call that crosses one
  is stopped, the check it ran in fails naming the bound (``cause``), and the bound's own check
  fails with the figures.  Reached without that, these checks report the figures.  A call that
  hangs without using CPU fails the check it happens in as ``timeout`` (the sandbox's deadline).
"""

from __future__ import annotations

from harness.core.errors import StrategyError
from strategy_tests.checks import MAIN
from strategy_tests.context import SampleView, ValidRun
from strategy_tests.fixtures import FAILED_METRICS, record, stress_records
from strategy_tests.report import CheckFailed

__all__ = ["EXTRA_CHECKS"]

PARENT_TOKENS = frozenset({"", "@diverge", "@refine"})


async def empty_population(run: ValidRun) -> str:
    await run.new("empty_db")
    try:
        view = await run.sample("empty_db", 4, check=False)
    except StrategyError as exc:
        if exc.kind in {"raised", "invalid"}:
            return f"sample() on an empty population fails cleanly ({exc.kind})"
        raise
    raise CheckFailed(
        f"sample() on an empty population returned program {view.parent[1]!r}; "
        "raise an exception (e.g. ValueError) when there is nothing to sample"
    )


async def single_program(run: ValidRun) -> str:
    await run.new("single_db")
    await run.add("single_db", [record("only_program", {"combined_score": 0.3}, 0)])
    view = await run.reference_sample("single_db", 4, "one-program population")
    if view.parent[1] != "only_program" or view.context:
        raise CheckFailed(
            f"with one program the answer must be that parent and no context; got parent "
            f"{view.parent[1]!r} and {len(view.context)} context programs"
        )
    return "one program: it is the parent, the context is empty"


def _own_context(view: SampleView) -> str | None:
    ids = [pid for _, pid in view.context]
    if view.parent[1] in ids:
        return f"the parent {view.parent[1]!r} is also in its own context"
    if len(set(ids)) != len(ids):
        return f"the context lists a program twice: {ids}"
    return None


async def parent_not_in_context(run: ValidRun) -> str:
    size = len(run.added[MAIN])
    for i, k in enumerate([4] * 10 + [size] * 5):
        view = await run.reference_sample(MAIN, k, f"sample {i + 1} (num_context_programs={k})")
        problem = _own_context(view)
        if problem:
            raise CheckFailed(problem)
    return "15 samples: parent never in its context, no duplicates"


async def labels(run: ValidRun) -> str:
    for i in range(10):
        await run.reference_sample(MAIN, 4, f"label sample {i + 1}")
    for view in run.answers:
        if view.parent[0] not in PARENT_TOKENS:
            raise CheckFailed(
                f"the parent label {view.parent[0][1:][:80]!r} is not allowed; use "
                '"", self.DIVERGE_LABEL or self.REFINE_LABEL'
            )
        bad = [token for token, _ in view.context if token != ""]
        if bad:
            raise CheckFailed(
                f"context label {bad[0].lstrip('?@')[:80]!r} is not allowed; "
                'context labels must be ""'
            )
    return f"{len(run.answers)} answers, all labels allowed"


async def failed_metrics(run: ValidRun) -> str:
    await run.new("failed_db")
    records = [record(f"ok_{i}", {"combined_score": 0.2 * i}, i) for i in range(3)]
    records += [record(f"failed_{i}", m, 3 + i) for i, m in enumerate(FAILED_METRICS)]
    await run.add("failed_db", records)
    for i in range(5):
        await run.reference_sample("failed_db", 3, f"sample {i + 1} with failed/missing metrics")
    return f"{len(FAILED_METRICS)} programs with failed or missing metrics tolerated"


Answered = tuple[tuple[str, str], tuple[tuple[str, str], ...]]


async def _sequence(run: ValidRun, handle: str) -> list[Answered]:
    await run.reseed(run.config.seed)
    await run.new(handle)
    await run.add(
        handle,
        [record(f"det_{i}", {"combined_score": (i * 7 % 10) / 10}, i) for i in range(12)],
        check=False,
    )
    out = []
    for _ in range(run.config.determinism_samples):
        view = await run.reference_sample(handle, 4, "determinism", check=False)
        out.append((view.parent, view.context))
    await run.drop(handle)
    return out


async def determinism(run: ValidRun) -> str:
    first = await _sequence(run, "det_a")
    second = await _sequence(run, "det_b")
    for i, (a, b) in enumerate(zip(first, second, strict=True)):
        if a != b:
            raise CheckFailed(
                f"with the same seed and the same programs, sample {i + 1} differed ({a[0][1]!r} "
                f"vs {b[0][1]!r}): use only random/numpy.random (seeded by the host) or an "
                "RNG seeded in __init__, never time, ids or hash order"
            )
    return f"{len(first)} samples identical under the same seed"


async def stress(run: ValidRun) -> str:
    cfg = run.config
    await run.new("stress_db")
    records = stress_records(cfg.stress_programs, seed=cfg.seed)
    for i, rec in enumerate(records):
        await run.add("stress_db", [rec], check=False)
        if (i + 1) % cfg.stress_every == 0:
            await run.reference_sample(
                "stress_db", 4, f"stress sample after {i + 1} adds", check=False
            )
    await run.drop("stress_db")
    return f"{len(records)} adds with a sample every {cfg.stress_every}"


async def call_time(run: ValidRun) -> str:
    # Enforced on every call by the judge; reaching this check means no call crossed it.
    slowest = run.judge.slowest
    if run.judge.meter is None:
        return f"slowest call {slowest.what} {slowest.wall_s * 1000:.1f} ms (wall; no CPU readings)"
    return (
        f"every call under {run.config.max_call_s:g} s of CPU; slowest {slowest.what} "
        f"{slowest.cpu_s * 1000:.1f} ms CPU ({slowest.wall_s * 1000:.1f} ms wall)"
    )


async def memory(run: ValidRun) -> str:
    usage = run.judge.last
    if usage is None:
        return "no memory readings for this sandbox"
    return (
        f"peak {usage.memory_peak_bytes / (1 << 20):.0f} MiB (at most {run.config.max_rss_mb} "
        f"MiB; {run.judge.meter.source if run.judge.meter else ''} high-water mark)"
    )


async def threads(run: ValidRun) -> str:
    usage = run.judge.last
    if usage is None:
        return "no task readings for this sandbox"
    return f"at most {usage.tasks_peak} threads and processes (limit {run.config.max_tasks})"


EXTRA_CHECKS = (
    ("empty_population", empty_population),
    ("single_program", single_program),
    ("parent_not_in_context", parent_not_in_context),
    ("labels", labels),
    ("failed_metrics", failed_metrics),
    ("determinism", determinism),
    ("stress", stress),
    ("call_time", call_time),
    ("memory", memory),
    ("threads", threads),
)
