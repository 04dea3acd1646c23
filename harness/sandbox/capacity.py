"""``CappedBackend``: one sandbox backend shared by many runs, with a global cap on jobs.

Runs that share a backend (a benchmark's cells, the hub's workers) each see their own handle:
jobs go through one semaphore, so at most ``cap`` evaluation containers run jobs at once across
all of them, and closing a handle only drops that run's warm containers (the backend stays up
for the others; its owner closes it).  A handle may also carry its run's own cap (``own``:
``evaluator.max_concurrent``), taken before the shared one, and a ``gate`` (the Runtime's
start-up canaries): every job awaits it first, so no job runs before it passed, whatever the
caller.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from harness.core.records import EvalResult
from harness.sandbox.protocol import Job, SandboxBackend

__all__ = ["CappedBackend", "SharedSlot"]


class SharedSlot:
    """The cap shared by every handle on one backend (an asyncio semaphore, one event loop)."""

    def __init__(self, cap: int) -> None:
        if cap < 1:
            raise ValueError(f"container cap must be at least 1, not {cap}")
        self.cap = cap
        self._sem = asyncio.Semaphore(cap)
        self.in_use = 0
        self.peak = 0

    async def __aenter__(self) -> None:
        await self._sem.acquire()
        self.in_use += 1
        self.peak = max(self.peak, self.in_use)

    async def __aexit__(self, *exc: object) -> None:
        self.in_use -= 1
        self._sem.release()


class CappedBackend:
    """A run's handle on a shared backend (see the module docstring)."""

    def __init__(
        self,
        inner: SandboxBackend,
        slot: SharedSlot,
        run_id: str | None,
        gate: Callable[[], Awaitable[None]] | None = None,
        own: SharedSlot | None = None,
    ) -> None:
        self.inner = inner
        self.slot = slot
        self.run_id = run_id
        self.name = inner.name
        self.gate = gate
        #: The run's own cap (None: only the shared one).
        self.own = own

    async def ready(self) -> None:
        """Wait for the gate (raises if it failed: e.g. a start-up canary got through)."""
        if self.gate is not None:
            await self.gate()

    async def run(self, job: Job) -> EvalResult:
        await self.ready()
        async with self.own or contextlib.nullcontext(), self.slot:
            return await self.inner.run(job)

    def image_id(self, name: str) -> str | None:
        """The content id of image ``name`` (blocking), if the backend can name it."""
        find = getattr(self.inner, "image_id", None)
        return find(name) if find is not None else None

    async def prewarm(self, job: Job, demand: int | None = None) -> None:
        """``demand``: the run's jobs at once, at most what its caps let run at once."""
        if demand is not None:
            demand = min(demand, self.slot.cap, self.own.cap if self.own else demand)
        prewarm = getattr(self.inner, "prewarm", None)
        if prewarm is not None:
            await (prewarm(job) if demand is None else prewarm(job, demand))

    async def aclose(self) -> None:
        release = getattr(self.inner, "release_run", None)
        if release is not None and self.run_id is not None:
            await asyncio.to_thread(release, self.run_id)
