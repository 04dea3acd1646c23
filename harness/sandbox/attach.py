"""A framed, capped, deadline-bound channel over a container's attach socket.

Docker multiplexes a non-TTY container's stdout and stderr on the attach socket as
``[stream, 0, 0, 0, u32 size]`` chunks; stdin is raw.  :class:`AttachedStream` sends frames to
the container's stdin and decodes frames (see :mod:`galapagos_sandbox.wire`) from its stdout,
keeps a bounded tail of stderr, refuses more stdout than ``max_frame`` allows and never blocks
past a deadline.  Evaluation jobs use it for one job and one result; long-lived strategy servers
can use it as a request/response RPC channel.

Attach *before* starting the container, so no output is produced before the socket exists.
"""

from __future__ import annotations

import asyncio
import contextlib
import select
import socket
import ssl
import struct
import time
from collections import deque
from typing import Any

import docker
from docker.models.containers import Container
from galapagos_sandbox.wire import FrameDecoder, WireError, encode_frame

__all__ = ["AttachedStream", "OutputLimitExceeded"]

_MUX = struct.Struct(">BxxxI")
STDERR_KEEP = 16 * 1024


class OutputLimitExceeded(WireError):
    """The container wrote more to stdout than the reader's cap allows."""


class AttachedStream:
    def __init__(self, sock: Any, *, max_frame: int) -> None:
        self._io = sock  # keeps docker-py's response (and so the connection) alive
        self._sock: socket.socket = getattr(sock, "_sock", sock)
        self._decoder = FrameDecoder(max_frame)
        self._frames: deque[tuple[dict[str, Any], bytearray]] = deque()
        self._mux = bytearray()
        self._stderr = bytearray()
        self._eof = False
        self.max_stdout = max_frame
        self.stdout_bytes = 0
        self.stderr_bytes = 0

    @classmethod
    def open(
        cls, client: docker.DockerClient, container: Container, *, max_frame: int
    ) -> AttachedStream:
        params = {"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
        return cls(client.api.attach_socket(container.id, params=params), max_frame=max_frame)

    def reset_output_budget(self) -> None:
        """Start a new stdout budget: on a long-lived channel the cap applies per response."""
        self.stdout_bytes = 0

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

    # -- receiving ---------------------------------------------------------------------------

    @property
    def stderr_tail(self) -> str:
        return bytes(self._stderr).decode("utf-8", "replace")

    def _demux(self, data: bytes) -> None:
        self._mux += data
        while len(self._mux) >= _MUX.size:
            stream, size = _MUX.unpack_from(self._mux)
            if len(self._mux) < _MUX.size + size:
                return
            payload = bytes(self._mux[_MUX.size : _MUX.size + size])
            del self._mux[: _MUX.size + size]
            if stream == 2:
                self.stderr_bytes += len(payload)
                self._stderr += payload
                del self._stderr[:-STDERR_KEEP]
                continue
            self.stdout_bytes += len(payload)
            if self.stdout_bytes > self.max_stdout:
                raise OutputLimitExceeded(
                    f"the container wrote more than {self.max_stdout} bytes of results"
                )
            self._frames.extend(self._decoder.feed(payload))

    def recv_frame(self, deadline: float | None) -> tuple[dict[str, Any], bytearray] | None:
        """Next frame from stdout; None at EOF.  Raises TimeoutError or WireError."""
        poller = select.poll()
        poller.register(self._sock.fileno(), select.POLLIN)
        while not self._frames:
            if self._eof:
                return None
            timeout_ms = None
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError
                timeout_ms = max(1, int(remaining * 1000))
            if not poller.poll(timeout_ms):
                continue
            try:
                chunk = self._sock.recv(1 << 16)
            except BlockingIOError:
                continue
            except (ConnectionResetError, BrokenPipeError):
                chunk = b""
            self._feed(chunk)
        return self._frames.popleft()

    def _feed(self, chunk: bytes) -> None:
        if chunk:
            self._demux(chunk)
        else:
            self._eof = True

    # -- the same, on an event loop (a job's exchange needs no thread) --------------------------

    async def asend(self, data: bytes, deadline: float) -> None:
        """``send`` without a thread; raises TimeoutError past ``deadline``."""
        if isinstance(self._sock, ssl.SSLSocket):  # the event loop's socket calls refuse TLS
            return await asyncio.to_thread(self.send, data, deadline)
        self._sock.setblocking(False)
        async with asyncio.timeout(max(0.001, deadline - time.monotonic())):
            await asyncio.get_running_loop().sock_sendall(self._sock, data)

    async def arecv_frame(self, deadline: float) -> tuple[dict[str, Any], bytearray] | None:
        """``recv_frame`` without a thread."""
        if isinstance(self._sock, ssl.SSLSocket):
            return await asyncio.to_thread(self.recv_frame, deadline)
        self._sock.setblocking(False)
        loop = asyncio.get_running_loop()
        async with asyncio.timeout(max(0.001, deadline - time.monotonic())):
            while not self._frames and not self._eof:
                try:
                    chunk = await loop.sock_recv(self._sock, 1 << 16)
                except (ConnectionResetError, BrokenPipeError):
                    chunk = b""
                self._feed(chunk)
        return self._frames.popleft() if self._frames else None

    def at_eof(self) -> bool:
        """True when the peer already hung up (checked without blocking)."""
        if self._eof:
            return True
        ready, _, _ = select.select([self._sock], [], [], 0)
        if not ready:
            return False
        try:
            peek = self._sock.recv(1, socket.MSG_PEEK)
        except OSError:
            return True
        return not peek

    def close(self) -> None:
        for closer in (self._sock, self._io):
            with contextlib.suppress(OSError):
                closer.close()
