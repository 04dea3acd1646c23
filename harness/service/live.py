"""Live progress: wakes the server-sent-event streams when the store commits.

The store's commit listener runs in the writer's thread; :meth:`LiveHub.notify` hands the
wake-up to the server's loop.  A stream also re-reads the store every ``poll_s`` seconds, so a
run written by another process (``galapagos run`` on the same store) is live too.
"""

from __future__ import annotations

import asyncio

__all__ = ["LiveHub"]


class LiveHub:
    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self._waiters: dict[str, set[asyncio.Event]] = {}
        #: Set when the server begins to shut down: every stream ends at once.
        self.closing = asyncio.Event()

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
