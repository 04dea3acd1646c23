"""``NodeAgent``: the Ray actor that owns one node's Runtime (one per Galapagos node).

Everything the node does for the cluster goes through its agent, so the node keeps one sandbox
backend and warm pool, one container cap (its capacity), one canary check and one orphan reap,
whoever sends the work:

- :meth:`run` evaluates one job for a run on the driver (the run's task files arrive once per
  node, by reference, and are kept by their object id);
- :meth:`run_cell` executes a whole run here (a benchmark cell, a hub run) with every commit
  going to the head's store (:class:`~harness.distributed.store.RemoteStore`);
- :meth:`load` reports what the node is doing (the hub shows it).

Images are built on the node from the recipes (content-hashed tags: a node builds only what it
lacks, and reports the tag so the driver can see every node runs the same recipe); the
start-up canaries run once per node before its first container.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import socket
import time
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from harness.core.config import EvaluatorConfig
from harness.core.records import EvalResult
from harness.runtime import Runtime
from harness.sandbox.capacity import CappedBackend
from harness.sandbox.protocol import Job

__all__ = ["NodeAgent"]

#: Task file sets kept per node (one per recent run).
FILES_KEPT = 32


class NodeAgent:
    """One node's Runtime, behind a Ray actor (see the module docstring)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.runtime = Runtime(max_containers=capacity)
        self._handles: dict[tuple[str | None, tuple[Any, ...]], CappedBackend] = {}
        self._files: OrderedDict[str, Mapping[str, bytes]] = OrderedDict()
        self._stops: dict[str, asyncio.Event] = {}
        self.jobs = 0
        self.inflight = 0
        self.files_fetched = 0

    @staticmethod
    def _evaluator(options: Mapping[str, Any]) -> EvaluatorConfig:
        return EvaluatorConfig(sandbox="docker", **options)

    async def _backend(self, options: Mapping[str, Any], run_id: str | None) -> CappedBackend:
        key = (run_id, tuple(sorted(options.items())))
        handle = self._handles.get(key)
        if handle is None:
            handle = await self.runtime.backend(self._evaluator(options), run_id)
            self._handles[key] = handle
        return handle

    async def _task_files(self, files: list[Any]) -> Mapping[str, bytes]:
        ref = files[0]
        key = ref.hex()
        found = self._files.get(key)
        if found is None:
            found = await ref  # pulled to this node once, then kept
            self.files_fetched += 1
            self._files[key] = found
            while len(self._files) > FILES_KEPT:
                self._files.popitem(last=False)
        else:
            self._files.move_to_end(key)
        return found

    async def ready(self, options: Mapping[str, Any], image: str) -> dict[str, Any]:
        """Canaries and the image, before the node's first job: the tag it runs."""
        handle = await self._backend(options, None)
        tag = await asyncio.to_thread(handle.inner.image_tag, image)  # type: ignore[attr-defined]
        return {"host": socket.gethostname(), "pid": os.getpid(), "image": tag}

    async def run(self, options: Mapping[str, Any], job: Job, files: list[Any]) -> EvalResult:
        """One evaluation job of a run on the driver."""
        run_id = job.labels.get("galapagos.run")
        handle = await self._backend(options, run_id)
        full = dataclasses.replace(job, files=await self._task_files(files))
        self.inflight += 1
        try:
            return await handle.run(full)
        finally:
            self.inflight -= 1
            self.jobs += 1

    async def prewarm(
        self, options: Mapping[str, Any], job: Job, files: list[Any], demand: int | None = None
    ) -> None:
        handle = await self._backend(options, job.labels.get("galapagos.run"))
        await handle.prewarm(dataclasses.replace(job, files=await self._task_files(files)), demand)

    async def release(self, run_id: str) -> None:
        """The run ended: drop its warm containers now."""
        for key in [k for k in self._handles if k[0] == run_id]:
            await self._handles.pop(key).aclose()

    async def reap(self) -> list[str]:
        """Remove containers of dead owners on this node's engine (after a node was lost)."""
        from harness.sandbox.ownership import reap_orphans

        backends = [b for b in self.runtime.backends if hasattr(b, "client")]
        if backends:
            return await asyncio.to_thread(reap_orphans, backends[0].client)
        from harness.sandbox.docker_backend import DockerBackend

        # No backend yet on this node: starting one reaps (and checks the engine).
        fresh = await asyncio.to_thread(DockerBackend, pool_size=0)
        try:
            return list(fresh.reaped)
        finally:
            await fresh.aclose()

    async def load(self) -> dict[str, Any]:
        return {
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "jobs": self.jobs,
            "jobs_running": self.inflight,
            "runs": sorted(self._stops),
            "containers_created": self.runtime.containers_created,
            "canary_runs": self.runtime.canary_runs,
            "files_fetched": self.files_fetched,
            "cpu_s": time.process_time(),  # this agent's own CPU (containers excluded)
        }

    # -- whole runs on this node ----------------------------------------------------------------
    async def run_cell(self, plan: Any, run_id: str, store: Any) -> dict[str, Any]:
        """Execute ``plan`` (a :class:`~harness.runs.RunPlan` made on the driver) here, on this
        node's Runtime, committing to the head's store actor ``store``."""
        from harness.distributed.store import RemoteStore
        from harness.runs import execute

        stop = self._stops[run_id] = asyncio.Event()
        try:
            remote = RemoteStore(store)  # the same calls, on the head's store
            summary = await execute(plan, remote, runtime=self.runtime, stop=stop, run_id=run_id)
        finally:
            self._stops.pop(run_id, None)
        return dataclasses.asdict(summary)

    async def stop_cell(self, run_id: str) -> bool:
        """Ask a run executing here to stop after its iterations in flight."""
        stop = self._stops.get(run_id)
        if stop is not None:
            stop.set()
        return stop is not None
