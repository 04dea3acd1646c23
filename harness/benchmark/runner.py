"""Running a benchmark: its cells as ordinary stored runs, ``parallel`` at a time, in one process.

Cells run through :func:`harness.runs.execute` on one shared :class:`~harness.runtime.Runtime`
(one sandbox backend and warm pool, canaries once, one client per LLM endpoint, a global cap
on containers); with a Ray cluster (``--ray-address``) each cell runs whole on a worker node,
on that node's Runtime, committing to this process's store (:mod:`harness.distributed.cells`).
Re-running a benchmark continues it: completed cells are skipped, interrupted
ones resumed from their last commit (:func:`harness.runs.plan_resume`), cells never started
are started.  A cell that fails (its run failed, its budget ran out, or its services could not
start) is recorded with the reason and the other cells go on; ``retry_failed`` gives failed
cells another go.  Setting ``stop`` ends every running cell after its iterations in flight
(``interrupted``, resumable) and starts no new one.  So does the infrastructure: a cell stopped
because the Docker engine stayed down past ``evaluator.engine_wait_s`` halts the benchmark
(:attr:`BenchmarkResult.halted` says why) instead of starting cell after cell into the same
outage; re-running the command continues it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from harness.benchmark.matrix import BenchmarkPlan, empty_cells
from harness.core.controller import Progress
from harness.core.errors import ConfigError, HarnessError, RunNotFound
from harness.core.store import RunRecord
from harness.distributed.cells import execute_anywhere
from harness.runs import RunPlan, new_run_id, plan_resume, run_status
from harness.runtime import Runtime
from harness.store.owner import owner_token, run_alive
from harness.store.protocols import StoreReader
from harness.store.sqlite import SQLiteStore

__all__ = ["BenchmarkResult", "CellState", "prepare_cells", "run_benchmark"]

log = logging.getLogger(__name__)

#: Statuses a cell ends in without running again (``failed`` only until ``retry_failed``).
FINAL = ("completed", "failed", "budget_exhausted")


@dataclass
class CellState:
    """A cell as the live view and ``--json`` show it."""

    scaffold: str
    task: str
    seed: int
    #: queued | running | completed | interrupted | failed | budget_exhausted
    status: str = "queued"
    run_id: str | None = None
    iterations_done: int = 0
    max_iterations: int = 0
    best_score: float | None = None
    evaluations: int = 0
    #: Evaluations this invocation made (a resumed cell's earlier ones are not counted).
    new_evaluations: int = 0
    tokens: int = 0
    cost: float = 0.0
    error: str = ""
    #: Why the cell's run stopped, as data (``RunRecord.stop_reason``).
    stop_reason: str = ""
    #: What this invocation does with the cell: ``start``, ``resume`` or ``skip``.
    action: str = "start"
    plan: RunPlan | None = field(default=None, repr=False)

    def as_dict(self) -> dict[str, object]:
        return {
            "scaffold": self.scaffold,
            "task": self.task,
            "seed": self.seed,
            "status": self.status,
            "run_id": self.run_id,
            "iterations_done": self.iterations_done,
            "max_iterations": self.max_iterations,
            "best_score": self.best_score,
            "evaluations": self.evaluations,
            "tokens": self.tokens,
            "cost": self.cost,
            "error": self.error,
        }


@dataclass
class BenchmarkResult:
    name: str
    cells: list[CellState]
    interrupted: bool
    wall_s: float
    containers_created: int
    canary_runs: int
    #: Why the infrastructure stopped the benchmark (the first such cell's reason), or "".
    halted: str = ""

    @property
    def failed(self) -> list[CellState]:
        return [c for c in self.cells if c.status in ("failed", "budget_exhausted")]


def _from_run(state: CellState, run: RunRecord) -> None:
    state.run_id = run.id
    state.status = run_status(run)
    state.iterations_done = run.iterations_done
    state.max_iterations = run.max_iterations
    state.best_score = run.best_score
    state.tokens = run.tokens
    state.cost = run.cost
    state.stop_reason = run.stop_reason
    if state.status in ("failed", "budget_exhausted", "interrupted"):
        state.error = run.error


def prepare_cells(
    plan: BenchmarkPlan, store: StoreReader, *, retry_failed: bool = False
) -> list[CellState]:
    """Each cell's state and what this invocation does with it; raises before anything runs
    (a cell running in another process, a resumed cell whose task changed)."""
    stored = {(c.scaffold, c.task, c.seed): c for c in store.benchmarks.benchmark_cells(plan.name)}
    states: list[CellState] = []
    for cell in plan.cells:
        state = CellState(cell.scaffold, cell.task, cell.seed, plan=cell.plan)
        state.max_iterations = cell.plan.config.general.max_iterations
        row = stored.get((cell.scaffold, cell.task, cell.seed))
        run = None
        if row is not None and row.run_id:
            try:
                run = store.get_run(row.run_id)
            except RunNotFound:
                run = None  # recorded, never created: its services did not start
        if run is not None:
            _from_run(state, run)
            state.evaluations = store.evaluation_count(run.id)
            if run_alive(run):
                raise ConfigError(
                    f"benchmark {plan.name!r}: cell {cell.scaffold} × {cell.task} × seed "
                    f"{cell.seed} is running in another process (run {run.id}, owner "
                    f"{run.owner}); wait for it or stop it first"
                )
            if state.status in FINAL and not (retry_failed and state.status == "failed"):
                state.action = "skip"
            else:
                state.action = "resume"
                state.plan = plan_resume(store, run.id)
        elif row is not None and row.error:
            state.error = row.error
            state.status = "failed"
            state.action = "start" if retry_failed else "skip"
        states.append(state)
    return states


async def run_benchmark(
    plan: BenchmarkPlan,
    store: SQLiteStore,
    states: list[CellState],
    *,
    parallel: int,
    runtime: Runtime,
    stop: asyncio.Event | None = None,
    on_update: Callable[[CellState], None] | None = None,
) -> BenchmarkResult:
    """Run the cells that ``states`` (from :func:`prepare_cells`) says to, ``parallel`` at a
    time, on ``runtime`` (closed by the caller)."""
    started = time.monotonic()
    stop = stop or asyncio.Event()
    if not plan.exists:
        store.benchmarks.create_benchmark(plan.name, plan.matrix, empty_cells(plan))
    me = owner_token()
    holder = store.benchmarks.claim_benchmark(plan.name, me)
    if holder:
        raise ConfigError(
            f"benchmark {plan.name!r} is being run by another process ({holder}); wait for it "
            "to end, or stop it, then run the command again"
        )
    try:
        return await _run_cells(plan, store, states, parallel, runtime, stop, on_update, started)
    finally:
        store.benchmarks.release_benchmark(plan.name, me)


async def _run_cells(
    plan: BenchmarkPlan,
    store: SQLiteStore,
    states: list[CellState],
    parallel: int,
    runtime: Runtime,
    stop: asyncio.Event,
    on_update: Callable[[CellState], None] | None,
    started: float,
) -> BenchmarkResult:
    notify = on_update or (lambda _state: None)
    halted: list[str] = []
    queue: asyncio.Queue[CellState] = asyncio.Queue()
    for state in states:
        if state.action != "skip":
            queue.put_nowait(state)

    async def worker() -> None:
        while not stop.is_set():
            try:
                state = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            await _run_cell(plan.name, state, store, runtime, stop, notify)
            if state.stop_reason == "engine_unavailable" and not stop.is_set():
                # The engine stayed down past its deadline: the next cells would run into the
                # same outage.
                halted.append(state.error)
                stop.set()

    workers = [asyncio.create_task(worker()) for _ in range(max(1, parallel))]
    try:
        await asyncio.gather(*workers)
    finally:
        for task in workers:
            task.cancel()
    return BenchmarkResult(
        name=plan.name,
        cells=states,
        interrupted=stop.is_set(),
        wall_s=time.monotonic() - started,
        containers_created=runtime.containers_created,
        canary_runs=runtime.canary_runs,
        halted=halted[0] if halted else "",
    )


async def _run_cell(
    name: str,
    state: CellState,
    store: SQLiteStore,
    runtime: Runtime,
    stop: asyncio.Event,
    notify: Callable[[CellState], None],
) -> None:
    assert state.plan is not None
    plan = state.plan
    if state.action == "resume" and plan.run is not None:
        run_id = plan.run.id
        baseline = store.evaluation_count(run_id)
    else:
        run_id = new_run_id()
        baseline = 0
        store.benchmarks.set_cell(name, state.scaffold, state.task, state.seed, run_id=run_id)
    state.run_id, state.status, state.error = run_id, "running", ""
    notify(state)

    def on_progress(p: Progress) -> None:
        state.iterations_done = p.iterations_done
        state.max_iterations = p.max_iterations
        state.best_score = p.best_score
        state.evaluations = p.evaluations
        state.new_evaluations = max(0, p.evaluations - baseline)
        state.tokens, state.cost = p.tokens, p.cost
        notify(state)

    error = ""
    try:
        await execute_anywhere(  # on a node of the runtime's Ray cluster, if it has one
            plan, store, runtime=runtime, stop=stop, run_id=run_id, on_progress=on_progress
        )
    except HarnessError as exc:
        error = str(exc)
    except Exception as exc:  # noqa: BLE001 - one cell's crash must not stop the others
        log.exception("benchmark %s: cell %s × %s × %s crashed", name, *_cell(state))
        error = f"internal error {type(exc).__name__}: {exc}"
    try:
        run = store.get_run(run_id)
    except RunNotFound:
        run = None
    if run is None:  # its services did not start: the cell says why
        state.status, state.error = "failed", error
        store.benchmarks.set_cell(
            name, state.scaffold, state.task, state.seed, run_id=run_id, error=error
        )
    else:
        if error and run.status == "running":
            store.update_run(run_id, status="failed", error=error)
            run = store.get_run(run_id)
        _from_run(state, run)
        state.evaluations = store.evaluation_count(run_id)
        state.new_evaluations = max(0, state.evaluations - baseline)
        if error and not state.error:
            state.error = error
    notify(state)


def _cell(state: CellState) -> tuple[str, str, int]:
    return state.scaffold, state.task, state.seed
