"""A framed, capped, deadline-bound channel over a container's attach socket, drained on the host.

Docker multiplexes a non-TTY container's stdout and stderr on the attach socket as
``[stream, 0, 0, 0, u32 size]`` chunks; stdin is raw.  :class:`AttachedStream` sends frames to
the container's stdin and decodes frames (see :mod:`galapagos_sandbox.wire`) from its stdout,
keeps a bounded tail of stderr, refuses more stdout than ``max_frame`` allows and never blocks
past a deadline.  Evaluation jobs use it for one job and one result; long-lived strategy servers
use it as a request/response RPC channel.

**The socket is read all the time, not only while a caller waits for a frame.**  A reader thread
per stream drains it from the moment it is opened until end of stream: stderr goes into the
bounded tail, stdout past the cap is counted and dropped, frames wait in a queue.  Why: dockerd
copies a container's output into this socket, and a copy that cannot write (nobody reading, the
socket buffer full) holds up the container's exit — so ``kill()`` of a container flooding its
stderr returned only when docker-py's 120 s request timeout fired (measured: 122 s on this
machine, see ``bench/kill_latency.py``).  With the socket always drained the kill path never
waits on output.  Memory stays bounded: the stderr tail, at most ``max_frame`` bytes of stdout
per budget, and nothing else is kept.

TLS connections to a remote engine are the one exception: an ``ssl`` socket must not be read and
written from two threads at once, so there the stream reads only while a caller waits (the
behaviour before the drain), and a flood can again slow a kill down.

Attach *before* starting the container, so no output is produced before the socket exists.
"""

from __future__ import annotations

import asyncio
import contextlib
import select
import socket
import ssl
import struct
import threading
import time
from collections import deque
from typing import Any

import docker
from docker.models.containers import Container
from galapagos_sandbox.wire import FrameDecoder, WireError, encode_frame

__all__ = ["AttachedStream", "OutputLimitExceeded"]

_MUX = struct.Struct(">BxxxI")
STDERR_KEEP = 16 * 1024
#: The reader re-checks for ``close()`` at least this often (seconds) even on a silent socket.
_IDLE_POLL_S = 0.5
_CHUNK = 1 << 16
_PENDING = object()

Frame = tuple[dict[str, Any], bytearray]


class OutputLimitExceeded(WireError):
    """The container wrote more to stdout than the reader's cap allows."""


class AttachedStream:
    def __init__(self, sock: Any, *, max_frame: int) -> None:
        self._io = sock  # keeps docker-py's response (and so the connection) alive
        self._sock: socket.socket = getattr(sock, "_sock", sock)
        self._decoder = FrameDecoder(max_frame)
        self._frames: deque[Frame] = deque()
        self._mux = bytearray()
        self._stderr = bytearray()
        self._eof = False
        self._closed = False
        #: A stdout error (over the cap, a malformed frame): raised once queued frames are read.
        self._error: WireError | None = None
        self.max_stdout = max_frame
        self.stdout_bytes = 0
        self.stderr_bytes = 0
        #: Bytes of stdout read and dropped after the cap or a malformed frame.
        self.dropped_bytes = 0
        self._cond = threading.Condition()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._reader: threading.Thread | None = None
        if not isinstance(self._sock, ssl.SSLSocket):
            self._reader = threading.Thread(
                target=self._drain, name="galapagos-attach-drain", daemon=True
            )
            self._reader.start()

    @classmethod
    def open(
        cls, client: docker.DockerClient, container: Container, *, max_frame: int
    ) -> AttachedStream:
        params = {"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
        return cls(client.api.attach_socket(container.id, params=params), max_frame=max_frame)

    def reset_output_budget(self) -> None:
        """Start a new stdout budget: on a long-lived channel the cap applies per response."""
        with self._cond:
            self.stdout_bytes = 0

    def new_exchange(self) -> None:
        """A new job on a reused container: a fresh stdout budget and stderr tail, so nothing
        of an earlier job shows in this one's result."""
        with self._cond:
            self.stdout_bytes = 0
            self._stderr.clear()

    # -- sending -----------------------------------------------------------------------------

    def send(self, data: bytes, deadline: float | None = None) -> None:
        timeout = None if deadline is None else max(0.001, deadline - time.monotonic())
        self._sock.settimeout(timeout)  # sendall raises TimeoutError past the deadline
        try:
            self._sock.sendall(data)
        finally:
            self._sock.settimeout(None)

    def send_frame(
        self, header: dict[str, Any], blob: bytes = b"", deadline: float | None = None
    ) -> None:
        self.send(encode_frame(header, blob), deadline)

    async def asend(self, data: bytes, deadline: float) -> None:
        """``send`` without a thread; raises TimeoutError past ``deadline``."""
        if isinstance(self._sock, ssl.SSLSocket):  # the event loop's socket calls refuse TLS
            return await asyncio.to_thread(self.send, data, deadline)
        self._sock.setblocking(False)
        async with asyncio.timeout(max(0.001, deadline - time.monotonic())):
            await asyncio.get_running_loop().sock_sendall(self._sock, data)

    # -- the drain ---------------------------------------------------------------------------

    @property
    def stderr_tail(self) -> str:
        with self._cond:
            return bytes(self._stderr).decode("utf-8", "replace")

    def _drain(self) -> None:
        """Reader thread: read until end of stream or ``close()``, whatever the callers do."""
        poller = select.poll()
        try:
            poller.register(self._sock.fileno(), select.POLLIN)
        except (OSError, ValueError):
            self._finish()
            return
        while not self._closed:
            try:
                if not poller.poll(int(_IDLE_POLL_S * 1000)):
                    continue
                # MSG_DONTWAIT: the socket may be in blocking mode for a concurrent ``send``.
                chunk = self._sock.recv(_CHUNK, socket.MSG_DONTWAIT)
            except (BlockingIOError, InterruptedError):
                continue
            except (OSError, ValueError):  # reset, or closed under us
                chunk = b""
            if not chunk:
                break
            self._feed(chunk)
        self._finish()

    def _finish(self) -> None:
        with self._cond:
            self._eof = True
            self._wake()

    def _wake(self) -> None:
        """Wake sync and async waiters (called with the lock held)."""
        self._cond.notify_all()
        for loop, fut in self._waiters:
            with contextlib.suppress(RuntimeError):  # the waiter's loop is already closed
                loop.call_soon_threadsafe(_resolve, fut)
        self._waiters.clear()

    def _feed(self, chunk: bytes) -> None:
        with self._cond:
            self._mux += chunk
            while len(self._mux) >= _MUX.size:
                stream, size = _MUX.unpack_from(self._mux)
                if len(self._mux) < _MUX.size + size:
                    break
                payload = bytes(self._mux[_MUX.size : _MUX.size + size])
                del self._mux[: _MUX.size + size]
                if stream == 2:
                    self.stderr_bytes += len(payload)
                    self._stderr += payload
                    del self._stderr[:-STDERR_KEEP]
                else:
                    self._stdout(payload)
            self._wake()

    def _stdout(self, payload: bytes) -> None:
        self.stdout_bytes += len(payload)
        if self._error is not None:
            self.dropped_bytes += len(payload)
            return
        if self.stdout_bytes > self.max_stdout:
            self.dropped_bytes += len(payload)
            self._error = OutputLimitExceeded(
                f"the container wrote more than {self.max_stdout} bytes of results"
            )
            return
        try:
            self._frames.extend(self._decoder.feed(payload))
        except WireError as exc:
            self._error = exc

    # -- receiving ---------------------------------------------------------------------------

    def _take(self) -> Frame | None | object:
        """A queued frame, None at EOF or ``_PENDING``; raises a stdout error (lock held)."""
        if self._frames:
            return self._frames.popleft()
        if self._error is not None:
            raise self._error
        if self._eof:
            return None
        return _PENDING

    def recv_frame(self, deadline: float | None) -> Frame | None:
        """Next frame from stdout; None at EOF.  Raises TimeoutError or WireError."""
        if self._reader is None:
            return self._recv_unthreaded(deadline)
        with self._cond:
            while True:
                got = self._take()
                if got is not _PENDING:
                    return got  # type: ignore[return-value]
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    raise TimeoutError
                self._cond.wait(remaining)

    async def arecv_frame(self, deadline: float) -> Frame | None:
        """``recv_frame`` without blocking the event loop."""
        if self._reader is None:
            return await asyncio.to_thread(self.recv_frame, deadline)
        loop = asyncio.get_running_loop()
        async with asyncio.timeout(max(0.001, deadline - time.monotonic())):
            while True:
                with self._cond:
                    got = self._take()
                    if got is not _PENDING:
                        return got  # type: ignore[return-value]
                    fut: asyncio.Future[None] = loop.create_future()
                    self._waiters.append((loop, fut))
                await fut

    def _recv_unthreaded(self, deadline: float | None) -> Frame | None:
        """TLS sockets: read only while waiting (no drain thread, see the module docstring)."""
        poller = select.poll()
        poller.register(self._sock.fileno(), select.POLLIN)
        while True:
            with self._cond:
                got = self._take()
            if got is not _PENDING:
                return got  # type: ignore[return-value]
            timeout_ms = None
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError
                timeout_ms = max(1, int(remaining * 1000))
            if not poller.poll(timeout_ms):
                continue
            try:
                chunk = self._sock.recv(_CHUNK)
            except (BlockingIOError, ssl.SSLWantReadError):
                continue
            except (ConnectionResetError, BrokenPipeError):
                chunk = b""
            if chunk:
                self._feed(chunk)
            else:
                self._finish()

    def at_eof(self) -> bool:
        """True when the peer already hung up (checked without blocking)."""
        if self._reader is not None or self._eof:
            return self._eof
        ready, _, _ = select.select([self._sock], [], [], 0)
        if not ready:
            return False
        try:
            peek = self._sock.recv(1, socket.MSG_PEEK)
        except OSError:
            return True
        return not peek

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)  # wakes the reader's poll
        if self._reader is not None and self._reader is not threading.current_thread():
            self._reader.join(timeout=2 * _IDLE_POLL_S)
        for closer in (self._sock, self._io):
            with contextlib.suppress(OSError):
                closer.close()
        self._finish()


def _resolve(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)
