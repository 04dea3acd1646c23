"""Warm pool of pre-started containers, each waiting for its next job (the Go playground pattern).

A container in the pool has started, imported the task's preload modules, built a candidate's
box or process, installed the sealed task (files and evaluator, in the runner only) and said
``ready``; it waits on stdin for one job.  A single-use container is destroyed afterwards; a
zygote container (:mod:`galapagos_sandbox.zygote`) prepares a fresh box for the next job and
comes back (:meth:`WarmPool.give_back`) until it retires.  Either way the ~250 ms start (plus
imports) is off the critical path, and no candidate ever runs in a box (or a single-use
container) another one ran in.

Containers are keyed by everything fixed at start-up (image, preload, limits, run, installed
task).  A few creator threads keep each wanted key at ``spare`` containers, counting the ones
starting and the ones on their way back (and, for containers that come back, the busy ones), and
raise that target to the most jobs a key ever had in flight plus one (at most ``size``), so a
run's parallel iterations soon find a container each.  A job that finds none waits for one
that is starting or coming back rather than starting its own (:meth:`WarmPool.wait`); keys
nobody asked for in ``idle_ttl_s`` are drained.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from harness.core.errors import InfrastructureFault, SandboxError
from harness.sandbox.protocol import Limits

__all__ = ["PoolKey", "WarmPool"]

log = logging.getLogger(__name__)
W = TypeVar("W")


@dataclass(frozen=True)
class PoolKey:
    image: str
    preload: tuple[str, ...]
    limits: Limits
    run: str | None = None
    #: Digest of the sealed task its containers install before ``ready`` (None: compat jobs,
    #: whose files travel with the job).
    task: str | None = None
    #: Compat jobs whose evaluator runs ``[sys.executable, script]`` (``jobs.warm_python``).
    warm_python: bool = False


class WarmPool(Generic[W]):
    """Keeps up to ``size`` ready containers per wanted key; ``take`` never blocks.

    ``spare``: containers (ready, starting or coming back, and with ``reused`` the busy ones)
    the creators keep per wanted key before demand raised it (default ``size``); ``demand``:
    jobs expected at once, the least the target becomes once a key's first job was taken (a
    key's own, given to ``want``, raises its target at once).
    """

    def __init__(
        self,
        start: Callable[[PoolKey], W],
        discard: Callable[[W], None],
        *,
        size: int,
        creators: int,
        spare: int | None = None,
        reused: bool = False,
        demand: int = 1,
        idle_ttl_s: float = 600.0,
        refill_delay_s: float = 0.05,
    ) -> None:
        self.size = size
        #: Jobs the caller expects at once (parallel iterations): a key's target after its
        #: first job, so containers for them start while the first job runs.
        self.demand = max(1, demand)
        #: Containers come back after a job (``give_back``): a busy one is one the key has.
        self._reused = reused
        self.spare = size if spare is None else max(1, min(spare, size))
        # Refilling right as a job starts would compete with it for the engine and the CPU;
        # a short delay lets short jobs finish first and costs long jobs nothing noticeable.
        self._refill_delay = refill_delay_s
        self._quiet_until = 0.0
        self._start, self._discard = start, discard
        self._idle_ttl = idle_ttl_s
        self._ready: dict[PoolKey, deque[W]] = {}
        self._starting: dict[PoolKey, int] = {}
        self._returning: dict[PoolKey, int] = {}
        self._busy: dict[PoolKey, int] = {}
        self._target: dict[PoolKey, int] = {}
        #: Per key, the jobs its caller expects at once (``want``; default ``demand``).
        self._demands: dict[PoolKey, int] = {}
        self._waiting: dict[PoolKey, int] = {}
        self._wanted: dict[PoolKey, float] = {}
        self._missed: set[PoolKey] = set()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._cond = threading.Condition()
        self._closed = False
        self._failing = 0
        self.hits = 0
        self.misses = 0
        #: Containers that came back after a job and were kept.
        self.returned = 0
        self._threads = [
            threading.Thread(target=self._creator, name=f"galapagos-pool-{i}", daemon=True)
            for i in range(creators)
        ]
        for thread in self._threads:
            thread.start()

    def want(self, key: PoolKey, demand: int | None = None) -> None:
        """Start (or keep) filling the pool for ``key``; ``demand``: its jobs expected at once
        (a run's parallel iterations), when the caller knows them.  A demand above one raises
        the key's target at once: containers for all of those jobs start before its first job
        (the first of them may still be starting: the others start beside it)."""
        with self._cond:
            new = key not in self._wanted
            self._wanted[key] = time.monotonic()
            self._ready.setdefault(key, deque())
            raised = demand is not None and max(1, demand) != self._demands.get(key, self.demand)
            if demand is not None:
                self._demands[key] = max(1, demand)
            if raised and self._demands[key] > 1:
                self._raise_target(key)
            if new or raised:
                self._cond.notify_all()

    def take(self, key: PoolKey) -> W | None:
        """A ready container for ``key``, or None (the caller waits or starts one cold).

        A key is kept filled once it was wanted (``want``, a prewarm) or taken twice: a
        one-off job does not leave a pool of containers nobody will use."""
        with self._cond:
            if key not in self._wanted and key not in self._missed:
                self.misses += 1
                if len(self._missed) > 256:
                    self._missed.clear()
                self._missed.add(key)
                return None
        self.want(key)
        with self._cond:
            queue = self._ready.get(key)  # dropped meanwhile: a cold start
            if queue:
                self.hits += 1
                self._quiet_until = time.monotonic() + self._refill_delay
                self._busy[key] = self._busy.get(key, 0) + 1
                self._raise_target(key)
                # A slot opened: wake one creator (waking all would have them compete with
                # the job for the CPU just as it starts).
                self._cond.notify()
                return queue.popleft()
            self.misses += 1
            return None

    async def wait(self, key: PoolKey, timeout: float) -> W | None:
        """``take``, waiting up to ``timeout`` for a container that is starting or coming back
        when there is one nobody else waits for; None when the caller should start its own."""
        loop = asyncio.get_running_loop()
        end = time.monotonic() + timeout
        while True:
            item = self.take(key)
            if item is not None:
                return item
            with self._cond:
                pending = self._starting.get(key, 0) + self._returning.get(key, 0)
                if (
                    self._closed
                    or key not in self._wanted
                    or pending <= self._waiting.get(key, 0)
                    or time.monotonic() >= end
                ):
                    self._busy[key] = self._busy.get(key, 0) + 1
                    self._raise_target(key)
                    self._cond.notify()
                    return None
                self._waiting[key] = self._waiting.get(key, 0) + 1
                fut: asyncio.Future[None] = loop.create_future()
                self._waiters.append((loop, fut))
            try:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(fut, max(0.001, end - time.monotonic()))
            finally:
                with self._cond:
                    self._waiting[key] -= 1

    def done(self, key: PoolKey, *, returning: bool) -> None:
        """A job of ``key`` finished; its container is now coming back (``give_back`` or
        ``abandon`` follows) or gone."""
        with self._cond:
            self._busy[key] = max(0, self._busy.get(key, 0) - 1)
            if returning:
                self._returning[key] = self._returning.get(key, 0) + 1
            else:
                self._cond.notify()

    def give_back(self, key: PoolKey, item: W) -> bool:
        """A container of ``key`` is ready for another job: keep it (True) or discard it."""
        with self._cond:
            self._returning[key] = max(0, self._returning.get(key, 0) - 1)
            keep = (
                not self._closed
                and key in self._wanted
                and len(self._ready.get(key, ())) < self.size
            )
            if keep:
                self._ready[key].append(item)
                self.returned += 1
            self._wake()
        if not keep:
            self._discard(item)
        return keep

    def abandon(self, key: PoolKey) -> None:
        """A container of ``key`` that was coming back will not (it retired or broke)."""
        with self._cond:
            self._returning[key] = max(0, self._returning.get(key, 0) - 1)
            self._wake()

    def flush(self) -> None:
        """Discard every ready container (after an engine outage they are dead); creators
        refill the wanted keys."""
        with self._cond:
            idle = [w for q in self._ready.values() for w in q]
            for queue in self._ready.values():
                queue.clear()
            self._failing = 0
            self._wake()
        for item in idle:
            self._discard(item)

    def drop(self, keep: Callable[[PoolKey], bool]) -> int:
        """Stop filling every key ``keep`` rejects and discard its ready containers (a run that
        ended on a backend other runs still use); returns how many were discarded."""
        with self._cond:
            gone = [key for key in self._wanted if not keep(key)]
            idle: list[W] = []
            for key in gone:
                del self._wanted[key]
                idle.extend(self._ready.pop(key, deque()))
                self._missed.discard(key)
                self._target.pop(key, None)
                self._demands.pop(key, None)
            self._wake()
        for item in idle:
            self._discard(item)
        return len(idle)

    def idle(self) -> int:
        with self._cond:
            return sum(len(q) for q in self._ready.values())

    # -- internals (call with the lock held) --------------------------------------------------

    def _raise_target(self, key: PoolKey) -> None:
        """Demand: one container more than the most jobs this key had in flight (at most
        ``size``), counting the busy ones."""
        demand = self._demands.get(key, self.demand)
        want = min(self.size, max(self._busy.get(key, 0), demand) + 1)
        if want > self._target.get(key, self.spare):
            self._target[key] = want

    def _wake(self) -> None:
        """Wake creators and every waiting job (each re-checks what it can take)."""
        self._cond.notify_all()
        for loop, fut in self._waiters:
            with contextlib.suppress(RuntimeError):  # the waiter's loop is already closed
                loop.call_soon_threadsafe(_resolve, fut)
        self._waiters.clear()

    def _next_key(self) -> PoolKey | None:
        now = time.monotonic()
        for key, last in list(self._wanted.items()):
            if now - last > self._idle_ttl and not self._busy.get(key):
                del self._wanted[key]
                self._target.pop(key, None)
                self._demands.pop(key, None)
                for stale in self._ready.pop(key, deque()):
                    self._discard(stale)
        for key in self._wanted:
            have = len(self._ready[key]) + self._starting.get(key, 0)
            have += self._returning.get(key, 0)
            if self._reused:  # containers that serve again count while they serve
                have += self._busy.get(key, 0)
            if have < self._target.get(key, self.spare):
                return key
        return None

    def _creator(self) -> None:
        while True:
            with self._cond:
                key = None
                while not self._closed and (key := self._next_key()) is None:
                    self._cond.wait(1.0)
                if self._closed or key is None:
                    return
                self._starting[key] = self._starting.get(key, 0) + 1
                # While stock remains, let the job that just took a container run first; an
                # empty pool is refilled at once.  Either way the pause is bounded.
                pause = self._quiet_until - time.monotonic() if self._ready[key] else 0.0
            if pause > 0:
                time.sleep(min(pause, self._refill_delay))
            try:
                item: W = self._start(key)
                self._failing = 0
            except (SandboxError, OSError) as exc:
                self._failing += 1
                # Once per streak; an engine fault (an outage) is reported by the jobs' wait.
                if self._failing == 1 and not isinstance(exc, InfrastructureFault):
                    log.warning("warm pool could not start a container: %s", exc)
                else:
                    log.debug("warm pool could not start a container: %s", exc)
                # An engine in trouble is not hammered; flush() (the engine is back) ends the
                # pause early, so the pool refills at once.
                with self._cond:
                    self._starting[key] -= 1
                    self._wake()
                    self._cond.wait(min(1.0 * self._failing, 5.0))
                continue
            with self._cond:
                self._starting[key] -= 1
                keep = not self._closed and key in self._wanted
                if keep:
                    self._ready[key].append(item)
                self._wake()
            if not keep:
                self._discard(item)

    def close(self) -> None:
        """Stop the creators and discard every idle container."""
        with self._cond:
            self._closed = True
            self._wake()
        for thread in self._threads:
            thread.join(timeout=120)
        with self._cond:
            idle = [w for q in self._ready.values() for w in q]
            self._ready.clear()
        for item in idle:
            self._discard(item)


def _resolve(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)
