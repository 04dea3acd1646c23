"""Whole runs on the cluster's nodes: benchmark cells and the hub's queued runs.

:func:`execute_on_cluster` places a run on the node running the fewest runs for its capacity;
the run executes there on the node's Runtime (its evaluations, strategy sessions and canaries
all on that node) and commits every iteration to the head's store through the store actor
(:mod:`harness.distributed.store`).  This process watches it through the store (progress) and
passes a stop on.

A node lost mid-run (its agent died) ends nothing: once the run's owner is known dead (at once
on a simulated cluster, where the owner's process is on this host; after its heartbeat went
stale on a real one) the run is resumed on another node from its last commit — exactly, as
``galapagos resume`` continues a run — so it ends as the undisturbed run would have.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

from harness.core.controller import Progress, RunSummary
from harness.core.errors import EngineUnavailable, HarnessError, RunNotFound, SandboxError
from harness.core.store import RunStore
from harness.distributed.cluster import Cluster, Node
from harness.runs import RunPlan, execute, plan_resume
from harness.runtime import Runtime
from harness.store.owner import HEARTBEAT_S, STALE_S, run_alive
from harness.store.protocols import RunReader
from harness.store.sqlite import SQLiteStore

__all__ = ["execute_anywhere", "execute_on_cluster"]

log = logging.getLogger(__name__)

#: How often this process reads a remote run's progress from the store (seconds).
POLL_S = 0.5
#: Nodes one run may lose before it is stopped as interrupted.
NODE_LOSSES = 5


async def execute_anywhere(
    plan: RunPlan,
    store: SQLiteStore,
    *,
    runtime: Runtime,
    run_id: str | None = None,
    stop: asyncio.Event | None = None,
    on_progress: Callable[[Progress], None] | None = None,
) -> RunSummary:
    """The run on a node of ``runtime``'s cluster if it has one, else here."""
    if runtime.cluster is not None and plan.config.evaluator.sandbox == "docker":
        return await execute_on_cluster(
            runtime.cluster, plan, store, run_id=run_id, stop=stop, on_progress=on_progress
        )
    return await execute(
        plan, store, runtime=runtime, run_id=run_id, stop=stop, on_progress=on_progress
    )


async def execute_on_cluster(
    cluster: Cluster,
    plan: RunPlan,
    store: SQLiteStore,
    *,
    run_id: str | None = None,
    stop: asyncio.Event | None = None,
    on_progress: Callable[[Progress], None] | None = None,
) -> RunSummary:
    """Execute ``plan`` on a node (see the module docstring); ``store`` is the head's."""
    from harness.runs import new_run_id

    run_id = plan.run.id if plan.run else (run_id or new_run_id())
    actor = cluster.store_actor(store.path)
    stop = stop or asyncio.Event()
    losses = 0
    while True:
        try:
            node = await cluster.acquire_run()
        except EngineUnavailable as exc:  # no node left: stop resumable, as an engine outage
            return _stopped(store, run_id, str(exc))
        watchers = [
            asyncio.create_task(_pass_stop(stop, node, run_id)),
            asyncio.create_task(_progress(store, run_id, on_progress)),
        ]
        try:
            data: dict[str, Any] = await node.actor.run_cell.remote(plan, run_id, actor)
            return RunSummary(**data)
        except cluster.ray.exceptions.RayActorError:
            losses += 1
            why = f"Ray node {node.label} was lost during run {run_id}"
            await cluster.lost(node, why)
            if losses > NODE_LOSSES:
                return _stopped(store, run_id, f"{why}, the {losses}th node this run lost")
            plan = await _resumable(store, plan, run_id)
            log.warning("%s; resuming it on another node from its last commit", why)
        except cluster.ray.exceptions.RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            if isinstance(cause, HarnessError):
                raise cause from None
            raise SandboxError(f"run {run_id} failed on node {node.label}: {exc}") from exc
        finally:
            for watcher in watchers:
                watcher.cancel()
            cluster.release_run(node)
        if stop.is_set():
            return _summary(store, run_id, "stopped")


async def _resumable(store: RunReader, plan: RunPlan, run_id: str) -> RunPlan:
    """The plan that continues ``run_id`` from its last commit, once its owner is dead."""
    try:
        run = store.get_run(run_id)
    except RunNotFound:
        return plan  # lost before its first commit: start it again
    deadline = time.monotonic() + STALE_S + 2 * HEARTBEAT_S
    while run_alive(run) and time.monotonic() < deadline:
        await asyncio.sleep(HEARTBEAT_S)  # an owner on another host: wait for its beat to stop
        run = store.get_run(run_id)
    return plan_resume(store, run_id)


def _stopped(store: RunStore, run_id: str, why: str) -> RunSummary:
    """The cluster cannot go on with the run: it stops ``interrupted`` (resumable) with the
    reason a Docker engine outage gives, so a benchmark halts rather than start more cells."""
    try:
        store.get_run(run_id)
    except RunNotFound:
        raise EngineUnavailable(why) from None  # never started: nothing to stop
    store.update_run(
        run_id,
        status="interrupted",
        stop_reason="engine_unavailable",
        error=f"{why}; continue with the same command once nodes are back",
    )
    return _summary(store, run_id, "engine_unavailable")


def _summary(store: RunStore, run_id: str, reason: str) -> RunSummary:
    run = store.get_run(run_id)
    return RunSummary(
        run_id=run.id,
        status=run.status,
        iterations_done=run.iterations_done,
        seed_score=run.seed_score,
        best_score=run.best_score,
        best_program_id=run.best_program_id,
        stop_reason=run.stop_reason or reason,
    )


async def _pass_stop(stop: asyncio.Event, node: Node, run_id: str) -> None:
    await stop.wait()
    with contextlib.suppress(Exception):  # the node may be gone: then the run is stopped anyway
        await node.actor.stop_cell.remote(run_id)


async def _progress(
    store: RunReader, run_id: str, on_progress: Callable[[Progress], None] | None
) -> None:
    if on_progress is None:
        return
    seen: tuple[Any, ...] = ()
    while True:
        await asyncio.sleep(POLL_S)
        try:
            run = store.get_run(run_id)
        except RunNotFound:
            continue
        now = (run.iterations_done, run.best_score, run.tokens)
        if now != seen:
            seen = now
            on_progress(
                Progress(
                    iterations_done=run.iterations_done,
                    max_iterations=run.max_iterations,
                    best_score=run.best_score,
                    evaluations=store.evaluation_count(run_id),
                    tokens=run.tokens,
                    cost=run.cost,
                )
            )
