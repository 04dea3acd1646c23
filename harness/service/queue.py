"""The run queue: bounded workers in one engine thread, persisted so a restart loses nothing.

The engine thread owns its own asyncio loop and the one writing connection to the run store:
runs execute there (the controller's blocking commits stall only that loop), while the web
server's loop serves readers on read-only connections.  The workers share one
:class:`~harness.runtime.Runtime` (one sandbox backend and warm pool, the canaries once per
start, one client per LLM endpoint, a cap on evaluation containers), created when the queue
starts and closed when it stops.  Each queued run already exists in the
store (status ``queued``) and in the hub's queue table; a worker starts it through
:func:`harness.runs.plan_resume` (a run with nothing committed starts from its seed), so a run
queued or running when the hub stopped (or was killed) is simply continued when it starts
again, exactly as ``galapagos resume`` would.  Every run is checked against the hub's policy
(:mod:`harness.service.policy`) as it starts, whatever its stored config says; a refused run is
stored ``failed`` with the one-line reason.  A run that raises is stored ``failed`` with the
reason (endpoint credentials redacted), and can be resumed.  A run the Docker engine stopped
(the engine stayed away past the run's ``evaluator.engine_wait_s``: the run ends
``interrupted``, nothing charged) keeps its queue row and is continued by the hub itself as soon
as the engine answers again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import Any

from harness.core.errors import HarnessError
from harness.core.redact import redact_text, redact_url
from harness.core.store import RunRecord
from harness.distributed.cells import execute_anywhere
from harness.llm.client import LLMClient
from harness.llm.config import ResolvedLLM
from harness.llm.usage import UsageMeter
from harness.runs import plan_resume
from harness.runtime import Runtime
from harness.service._db import ServiceDB
from harness.service.policy import HubPolicy
from harness.service.schemas import API_NAMES
from harness.store.owner import owner_token, run_alive
from harness.store.sqlite import SQLiteStore

__all__ = ["RunQueue"]

log = logging.getLogger("galapagos.service")


class RunQueue:
    def __init__(
        self,
        store: SQLiteStore,
        db: ServiceDB,
        *,
        workers: int,
        ray_address: str | None = None,
        policy: HubPolicy,
    ) -> None:
        self.store = store
        #: With a Ray cluster, runs execute on its nodes (harness.distributed.cells).
        self.ray_address = ray_address
        self.cluster: Any = None
        self.db = db
        self.policy = policy
        self.workers = max(1, workers)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._queue: asyncio.Queue[str] | None = None
        self._stops: dict[str, asyncio.Event] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._cancelled: set[str] = set()
        self._stopping = False
        self._workers: list[asyncio.Task[None]] = []
        self._waiting: dict[str, asyncio.Task[None]] = {}  # runs waiting for the engine
        #: What the workers' runs share; made in the engine thread when the queue starts.
        self.runtime: Runtime | None = None

    # -- lifecycle (called from the server's thread) -----------------------------------------
    def start(self) -> None:
        """Start the engine thread; its workers take every pending row of the queue table
        (a queue stopped earlier may start again)."""
        self._stopping = False
        if self.ray_address is not None and self.cluster is None:
            from harness.distributed.cluster import Cluster

            self.cluster = Cluster(self.ray_address)
        self._ready.clear()
        self._stops.clear()
        self._cancelled.clear()
        self._thread = threading.Thread(
            target=self._thread_main, name="galapagos-runs", daemon=True
        )
        self._thread.start()
        self._ready.wait(30)

    def stop(self, grace_s: float) -> None:
        """Ask running runs to finish their iteration in flight; cancel what is still running
        after ``grace_s``.  Their queue rows stay ``running``: the next start resumes them."""
        loop = self._loop
        if loop is None or self._thread is None or loop.is_closed():
            return
        future = asyncio.run_coroutine_threadsafe(self._shutdown(grace_s), loop)
        try:
            future.result(grace_s + 10)
        except Exception:  # noqa: BLE001 - shutting down: log, never hang
            log.exception("run queue did not stop cleanly")
        loop.call_soon_threadsafe(loop.stop)
        self._thread.join(10)
        if self.cluster is not None:
            self.cluster.close()  # this hub's store actor (the node agents stay)

    def submit(self, run_id: str) -> None:
        """Hand a queued run (already in the queue table) to the workers; before the queue
        starts this does nothing: :meth:`start` takes every pending row."""
        if self._loop is not None and not self._loop.is_closed():
            self._call(lambda: self._put(run_id))

    def cancel(self, run_id: str) -> str:
        """``stopping``: the run finishes its iteration in flight and ends ``interrupted``;
        ``cancelled``: it was waiting and will not start; ``idle``: neither (nothing done).

        Runs in the engine loop, where a worker takes a run without yielding between reading
        its queue row and registering it, so a cancel never slips between the two."""
        result: Future[str] = Future()

        def do() -> None:
            try:
                waiting = self._waiting.pop(run_id, None)
                if waiting is not None:  # stopped by the engine, not yet continued
                    waiting.cancel()
                    self.db.set_state(run_id, "done", "cancelled")
                    result.set_result("cancelled")
                    return
                stop = self._stops.get(run_id)
                if stop is not None:
                    self._cancelled.add(run_id)
                    stop.set()
                    result.set_result("stopping")
                    return
                item = self.db.item(run_id)
                if item is not None and item.state == "queued":
                    self.db.set_state(run_id, "done", "cancelled")
                    self.store.update_run(
                        run_id,
                        status="interrupted",
                        error="cancelled before it started; resume it to run it",
                    )
                    result.set_result("cancelled")
                    return
                result.set_result("idle")
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                result.set_exception(exc)

        if self._loop is None or self._loop.is_closed():
            do()  # no worker exists: nothing can take the run meanwhile
        else:
            self._call(do)
        return result.result(30)

    def running(self) -> set[str]:
        return set(self._stops) | set(self._waiting)

    def cluster_load(self) -> list[dict[str, Any]]:
        """Per Ray node: capacity, jobs and runs in flight (empty without a cluster)."""
        if self.cluster is None or self._loop is None or self._loop.is_closed():
            return []
        return asyncio.run_coroutine_threadsafe(self.cluster.load(), self._loop).result(30)

    # -- engine thread ----------------------------------------------------------------------
    def _call(self, fn: Callable[[], None]) -> None:
        if self._loop is None:
            raise RuntimeError("the run queue is not started")
        self._loop.call_soon_threadsafe(fn)

    def _put(self, run_id: str) -> None:
        assert self._queue is not None
        self._queue.put_nowait(run_id)

    def _thread_main(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self._loop = loop
        self._queue = asyncio.Queue()
        self.runtime = HubRuntime(
            self.policy.settings.api_base, parallel=self.workers, cluster=self.cluster
        )
        for item in self.db.pending():
            self._queue.put_nowait(item.run_id)
        self._workers = [loop.create_task(self._worker()) for _ in range(self.workers)]
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            for task in asyncio.all_tasks(loop):
                task.cancel()
            loop.run_until_complete(asyncio.sleep(0))
            if self.runtime is not None:  # stopped without stop(): still remove its containers
                loop.run_until_complete(self.runtime.aclose())
            loop.close()

    async def _worker(self) -> None:
        assert self._queue is not None
        while not self._stopping:
            run_id = await self._queue.get()
            if self._stopping:
                return
            task = asyncio.current_task()
            assert task is not None
            self._tasks[run_id] = task
            try:
                await self._run_one(run_id)
            finally:
                self._tasks.pop(run_id, None)

    async def _run_one(self, run_id: str) -> None:
        item = self.db.item(run_id)
        if item is None or item.state == "done":
            return
        try:
            run = self.store.get_run(run_id)
        except HarnessError as exc:
            self.db.set_state(run_id, "done", str(exc))
            return
        if run.owner != owner_token() and run_alive(run):
            self.db.set_state(run_id, "done", "running in another process")
            return
        options = _still_to_apply(run, item.options)
        if run.status == "completed" and "iterations" not in options:
            self.db.set_state(run_id, "done")
            return
        self.db.set_state(run_id, "running")
        stop = asyncio.Event()
        self._stops[run_id] = stop
        error = ""
        try:
            plan = plan_resume(self.store, run_id, names=API_NAMES, **options)
            self.policy.check_plan(plan)  # whatever the stored config says
            assert self.runtime is not None
            await execute_anywhere(plan, self.store, stop=stop, runtime=self.runtime)
            if self._engine_stopped(run_id):
                self._stops.pop(run_id, None)
                self._waiting[run_id] = asyncio.get_running_loop().create_task(
                    self._resume_when_engine_back(run_id)
                )
                return
        except asyncio.CancelledError:
            if not self._stopping:
                self.db.set_state(run_id, "done", "cancelled")
            raise
        except HarnessError as exc:
            error = redact_text(str(exc))
            self.store.update_run(run_id, status="failed", error=error)
        except Exception as exc:  # noqa: BLE001 - a run's crash must not take the hub down
            log.exception("run %s crashed", run_id)
            error = redact_text(
                f"internal error {type(exc).__name__}: {exc} (resume the run to retry)"
            )
            self.store.update_run(run_id, status="failed", error=error)
        finally:
            self._stops.pop(run_id, None)
        if not self._stopping or run_id in self._cancelled:
            self.db.set_state(run_id, "done", error)
        self._cancelled.discard(run_id)

    def _engine_stopped(self, run_id: str) -> bool:
        """Whether the run ended ``interrupted`` because the Docker engine stayed away (not
        because the hub stops or the run was cancelled)."""
        if self._stopping or run_id in self._cancelled:
            return False
        run = self.store.get_run(run_id)
        return run.status == "interrupted" and run.stop_reason == "engine_unavailable"

    async def _resume_when_engine_back(self, run_id: str) -> None:
        """Poll the engine; once it answers, hand the run to the workers again (its queue row
        stays ``running``, so a hub restarted meanwhile continues it too)."""
        self.store.update_run(
            run_id,
            error="the Docker engine is unreachable; the hub continues this run when it is back",
        )
        log.warning("run %s waits for the Docker engine", run_id)
        try:
            assert self.runtime is not None
            back = await self.runtime.engine_returned(run_id, lambda: self._stopping)
        finally:
            self._waiting.pop(run_id, None)
        if not back:
            return
        log.warning("the Docker engine is back; run %s continues", run_id)
        self._put(run_id)

    async def _shutdown(self, grace_s: float) -> None:
        self._stopping = True
        for waiting in self._waiting.values():
            waiting.cancel()
        for stop in self._stops.values():
            stop.set()
        running = [t for t in self._tasks.values() if not t.done()]
        if running:
            _, pending = await asyncio.wait(running, timeout=grace_s)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=5)
        for worker in self._workers:
            worker.cancel()
        if self.runtime is not None:
            try:
                await asyncio.wait_for(self.runtime.aclose(), timeout=max(grace_s, 5.0))
            except (TimeoutError, HarnessError):  # shutting down: log, never hang
                log.warning("the shared runtime did not close cleanly")


class HubRuntime(Runtime):
    """The queue's shared runtime: runs store the operator's endpoint redacted (no
    credentials in the store), and only their HTTP client gets the full URL."""

    def __init__(self, api_base: str | None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._endpoint = api_base
        self._shown = redact_url(api_base) if api_base else None

    async def llm(
        self, settings: ResolvedLLM, *, rng: random.Random, meter: UsageMeter
    ) -> LLMClient:
        if not (self._endpoint and settings.api_base == self._shown != self._endpoint):
            return await super().llm(settings, rng=rng, meter=meter)
        real = dataclasses.replace(settings, api_base=self._endpoint)
        client = await super().llm(real, rng=rng, meter=meter)
        # Requests go through the transport made for the full URL; the client's messages
        # (errors stored with the run) name the endpoint as stored: redacted.
        client.settings = settings
        return client


def _still_to_apply(run: RunRecord, options: Mapping[str, Any]) -> dict[str, Any]:
    """Resume options minus what an earlier start of the same request already applied (a
    run extended to N iterations is not extended to N again after a restart)."""
    out = dict(options)
    if out.get("iterations") is not None and run.max_iterations >= int(out["iterations"]):
        out.pop("iterations")
    llm = run.config.get("llm") or {}
    if (
        out.get("max_total_tokens") is not None
        and llm.get("max_total_tokens") == out["max_total_tokens"]
    ):
        out.pop("max_total_tokens")
    if out.get("max_cost") is not None and llm.get("max_cost") == out["max_cost"]:
        out.pop("max_cost")
    return {k: v for k, v in out.items() if v is not None}
