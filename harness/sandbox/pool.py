"""Warm pool of single-use, pre-started containers (the Go playground pattern).

A container in the pool has started, imported the task's preload modules, forked its confined
candidate process, installed the sealed task (files and evaluator, in the runner only) and said
``ready``; it waits on stdin for exactly one job and is destroyed afterwards.  Nothing is ever
reused, so the pool only moves the ~250 ms start (plus imports) off the critical path.
Containers are keyed by everything fixed at start-up (image, preload, limits, run, installed
task); a few creator threads keep each wanted key topped up to ``size`` in the background, and
keys nobody asked for in ``idle_ttl_s`` are drained."""

from __future__ import annotations

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


class WarmPool(Generic[W]):
    """Keeps up to ``size`` started containers per wanted key; ``take`` never blocks."""

    def __init__(
        self,
        start: Callable[[PoolKey], W],
        discard: Callable[[W], None],
        *,
        size: int,
        creators: int,
        idle_ttl_s: float = 600.0,
        refill_delay_s: float = 0.05,
    ) -> None:
        self.size = size
        # Refilling right as a job starts would compete with it for the engine and the CPU;
        # a short delay lets short jobs finish first and costs long jobs nothing noticeable.
        self._refill_delay = refill_delay_s
        self._quiet_until = 0.0
        self._start, self._discard = start, discard
        self._idle_ttl = idle_ttl_s
        self._ready: dict[PoolKey, deque[W]] = {}
        self._starting: dict[PoolKey, int] = {}
        self._wanted: dict[PoolKey, float] = {}
        self._missed: set[PoolKey] = set()
        self._cond = threading.Condition()
        self._closed = False
        self._failing = 0
        self.hits = 0
        self.misses = 0
        self._threads = [
            threading.Thread(target=self._creator, name=f"galapagos-pool-{i}", daemon=True)
            for i in range(creators)
        ]
        for thread in self._threads:
            thread.start()

    def want(self, key: PoolKey) -> None:
        """Start (or keep) filling the pool for ``key``."""
        with self._cond:
            new = key not in self._wanted
            self._wanted[key] = time.monotonic()
            self._ready.setdefault(key, deque())
            if new:
                self._cond.notify_all()

    def take(self, key: PoolKey) -> W | None:
        """A ready container for ``key``, or None (the caller starts one cold).

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
                # A slot opened: wake one creator (waking all would have them compete with
                # the job for the CPU just as it starts).
                self._cond.notify()
                return queue.popleft()
            self.misses += 1
            return None

    def flush(self) -> None:
        """Discard every ready container (after an engine outage they are dead); creators
        refill the wanted keys."""
        with self._cond:
            idle = [w for q in self._ready.values() for w in q]
            for queue in self._ready.values():
                queue.clear()
            self._failing = 0
            self._cond.notify_all()
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
        for item in idle:
            self._discard(item)
        return len(idle)

    def idle(self) -> int:
        with self._cond:
            return sum(len(q) for q in self._ready.values())

    def _next_key(self) -> PoolKey | None:
        now = time.monotonic()
        for key, last in list(self._wanted.items()):
            if now - last > self._idle_ttl:
                del self._wanted[key]
                for stale in self._ready.pop(key, deque()):
                    self._discard(stale)
        for key in self._wanted:
            if len(self._ready[key]) + self._starting.get(key, 0) < self.size:
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
                item = self._start(key)
                self._failing = 0
            except (SandboxError, OSError) as exc:
                self._failing += 1
                # Once per streak; an engine fault (an outage) is reported by the jobs' wait.
                if self._failing == 1 and not isinstance(exc, InfrastructureFault):
                    log.warning("warm pool could not start a container: %s", exc)
                else:
                    log.debug("warm pool could not start a container: %s", exc)
                item = None
                # An engine in trouble is not hammered; flush() (the engine is back) ends the
                # pause early, so the pool refills at once.
                with self._cond:
                    self._cond.wait(min(1.0 * self._failing, 5.0))
            with self._cond:
                self._starting[key] -= 1
                keep = item is not None and not self._closed and key in self._wanted
                if keep and item is not None:
                    self._ready[key].append(item)
            if item is not None and not keep:
                self._discard(item)

    def close(self) -> None:
        """Stop the creators and discard every idle container."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        for thread in self._threads:
            thread.join(timeout=120)
        with self._cond:
            idle = [w for q in self._ready.values() for w in q]
            self._ready.clear()
        for item in idle:
            self._discard(item)
