"""Live progress: wakes the server-sent-event streams when the store commits, shares one read
of a run among all its streams, and bounds how many streams are open.

The store's commit listener runs in the writer's thread; :meth:`LiveHub.notify` hands the
wake-up to the server's loop.  A stream also re-reads the store every ``poll_s`` seconds, so a
run written by another process (``galapagos run`` on the same store) is live too.  However
many streams watch a run, its progress is read once per change or poll
(:meth:`LiveHub.snapshot`), so 500 open streams cost the store what one does.

Streams are capped per client (a token, else an address) and in all
(``max_streams_per_client``, ``max_streams``): past a cap the hub answers 429 with
``Retry-After`` before any stream starts.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from harness.service.settings import ServiceSettings

__all__ = ["LiveHub", "StreamsFull"]

#: Seconds a client refused a stream is told to wait.
STREAM_RETRY_S = 10


class StreamsFull(Exception):
    """No stream slot for this client (429)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.retry_after_s = STREAM_RETRY_S


class LiveHub:
    def __init__(self, settings: ServiceSettings | None = None) -> None:
        self.settings = settings or ServiceSettings()
        self.loop: asyncio.AbstractEventLoop | None = None
        self._waiters: dict[str, set[asyncio.Event]] = {}
        #: Set when the server begins to shut down: every stream ends at once.
        self.closing = asyncio.Event()
        self._versions: dict[str, int] = {}
        self._snapshots: dict[str, tuple[int, float, Any]] = {}
        self._reading: dict[str, asyncio.Future[Any]] = {}
        self._streams: dict[str, int] = {}

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop

    def notify(self, run_id: str, what: str = "") -> None:
        """Thread-safe: wake the streams of ``run_id`` and of the runs list (``*``)."""
        loop = self.loop
        if loop is None or loop.is_closed():
            return
        try:
            loop.call_soon_threadsafe(self._wake, run_id)
        except RuntimeError:  # the loop closed meanwhile
            pass

    def _wake(self, run_id: str) -> None:
        self._versions[run_id] = self._versions.get(run_id, 0) + 1
        for key in (run_id, "*"):
            for event in self._waiters.get(key, ()):
                event.set()

    def close(self) -> None:
        """Thread-safe: end every stream now (the server is stopping)."""
        loop = self.loop
        if loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(self.closing.set)
            except RuntimeError:
                pass

    async def wait(self, run_id: str, timeout: float) -> bool:
        """Until ``run_id`` changes, ``timeout`` passes or the server closes (True: closing)."""
        event = asyncio.Event()
        self._waiters.setdefault(run_id, set()).add(event)
        closing = asyncio.ensure_future(self.closing.wait())
        changed = asyncio.ensure_future(event.wait())
        try:
            await asyncio.wait(
                {closing, changed}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            closing.cancel()
            changed.cancel()
            waiters = self._waiters.get(run_id)
            if waiters is not None:
                waiters.discard(event)
                if not waiters:
                    self._waiters.pop(run_id, None)
        return self.closing.is_set()

    # -- one read per change, shared by every stream of a run -----------------------------------
    async def snapshot(self, run_id: str, read: Callable[[], Any]) -> Any:
        """``read()`` (in a worker thread) for ``run_id``, shared: streams asking while a read
        is under way wait for it; its result serves until the run commits again (this process)
        or half a poll interval passes (another process's writes)."""
        version = self._versions.get(run_id, 0)
        kept = self._snapshots.get(run_id)
        if kept is not None and kept[0] == version:
            if time.monotonic() - kept[1] < self.settings.poll_s / 2:
                return kept[2]
        pending = self._reading.get(run_id)
        if pending is None:
            pending = asyncio.ensure_future(asyncio.to_thread(read))
            self._reading[run_id] = pending
            pending.add_done_callback(lambda _: self._reading.pop(run_id, None))
            value = await asyncio.shield(pending)
            self._snapshots[run_id] = (version, time.monotonic(), value)
            if len(self._snapshots) > 4 * max(1, len(self._waiters)) + 64:
                self._forget()
            return value
        return await asyncio.shield(pending)

    def _forget(self) -> None:
        watched = set(self._waiters)
        for run_id in list(self._snapshots):
            if run_id not in watched:
                self._snapshots.pop(run_id, None)

    # -- stream slots --------------------------------------------------------------------------
    def open_stream(self, client: str) -> None:
        """Take a stream slot for ``client`` (event-loop thread only), or raise StreamsFull."""
        s = self.settings
        total = sum(self._streams.values())
        held = self._streams.get(client, 0)
        if total >= s.max_streams:
            raise StreamsFull(f"the hub holds {total} live streams, its limit; try again later")
        if held >= s.max_streams_per_client:
            raise StreamsFull(
                f"you hold {held} live streams, the limit per client; close one (a browser tab) "
                "or read /api/v1/runs/{id}/events instead"
            )
        self._streams[client] = held + 1

    def close_stream(self, client: str) -> None:
        left = self._streams.get(client, 0) - 1
        if left > 0:
            self._streams[client] = left
        else:
            self._streams.pop(client, None)

    @property
    def open_streams(self) -> int:
        return sum(self._streams.values())
