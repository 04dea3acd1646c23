"""Capped capture of the candidate's stdout and stderr (never the result channel).

Everything the candidate prints is counted; the last :data:`TAIL_BYTES` of each stream are kept
for feedback, and crossing the limit trips ``on_overflow`` (which kills the candidate).
"""

from __future__ import annotations

# The low-level half of ``threading`` (a lock and a daemon thread are all this needs; the
# ``threading`` module costs every container milliseconds of start-up CPU).
import _thread
import os
import select

from galapagos_sandbox.schema import clean_text

# typing costs milliseconds of container start-up; annotations are strings anyway.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["TAIL_BYTES", "OutputCapture"]

TAIL_BYTES = 8 * 1024


def _readable(fd: int) -> bool:
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(0))


class OutputCapture:
    """Counts everything the candidate prints, keeps the tails, trips once over ``limit``.

    Pipes are read only under the lock and only after ``poll`` said they are readable, so the
    drain threads and :meth:`settle` (called before the result is written, to pick up what the
    candidate printed just before answering) never block each other or lose bytes.  The lock is
    re-entrant: the runner's watchdog (a signal handler that never returns) may interrupt the
    main thread while it holds it.
    """

    def __init__(self, limit: int, on_overflow: Callable[[], None]) -> None:
        self.limit = limit
        self.total = 0
        self.overflow = False
        self._on_overflow = on_overflow
        self._tails = {"stdout": bytearray(), "stderr": bytearray()}
        self._open: dict[int, str] = {}
        self._lock = _thread.RLock()

    def watch(self, fd: int, stream: str) -> None:
        with self._lock:
            self._open[fd] = stream
        _thread.start_new_thread(self._drain, (fd,))

    def _drain(self, fd: int) -> None:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        while fd in self._open:
            poller.poll()
            self._read_available(fd)

    def _read_available(self, fd: int) -> None:
        tripped = False
        with self._lock:
            stream = self._open.get(fd)
            if stream is None:
                return
            if not _readable(fd):
                return
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                del self._open[fd]
                os.close(fd)
                return
            self.total += len(chunk)
            tail = self._tails[stream]
            tail += chunk[-TAIL_BYTES:]
            del tail[:-TAIL_BYTES]
            if self.total > self.limit and not self.overflow:
                self.overflow = tripped = True
        if tripped:
            self._on_overflow()

    def settle(self) -> None:
        """Read whatever is already in the pipes (bounded: at most a few chunks per pipe)."""
        for _ in range(64):
            with self._lock:
                pending = [fd for fd in self._open if _readable(fd)]
            if not pending:
                return
            for fd in pending:
                self._read_available(fd)

    def text(self, stream: str) -> str:
        with self._lock:
            return clean_text(bytes(self._tails[stream]).decode("utf-8", "replace"))
