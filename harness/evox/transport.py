"""How the host reaches a strategy server: the :class:`Transport` seam and the local transports.

A transport carries one request frame and brings back one response frame under a deadline.
Anything that is not a well-formed response in time (the server died, hung, ran out of memory,
sent garbage) becomes :class:`~harness.core.errors.StrategyError` with a ``kind`` and leaves
the transport dead; the caller never sees docker-py or OS errors.

- :class:`SubprocessTransport` — the server as a local process (``--sandbox local``): UNSAFE
  for untrusted strategies (no isolation beyond rlimits), used when Docker is unavailable and
  by fast unit tests of trusted/fixture strategies.
- ``DockerTransport`` (:mod:`harness.evox.docker_transport`) — the real boundary.

Blocking channel I/O runs on one private thread per transport, so calls stay ordered.  Two
things happen beside that thread, from the judge's side: :attr:`Transport.meter` reads what the
server costs from the kernel (see :mod:`harness.sandbox.usage`), and :meth:`Transport.kill`
stops the server at once — the call waiting on the private thread then fails with the reason
the judge gave, not as a crash.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, TypeVar

from galapagos_sandbox.wire import WireError, encode_frame, read_frame, write_all

from harness.core.errors import StrategyError
from harness.sandbox import _runtime
from harness.sandbox.hardening import minimal_env
from harness.sandbox.usage import Meter, ProcMeter

__all__ = ["Transport", "ThreadedTransport", "SubprocessTransport", "MAX_RESPONSE"]

#: Largest response frame accepted from a strategy server.
MAX_RESPONSE = 4 << 20
STDERR_KEEP = 4000
T = TypeVar("T")


class Transport(Protocol):
    """One strategy server.  ``call`` raises ``StrategyError`` (kind timeout/crash/oom/protocol)."""

    name: str
    #: Resource readings of the running server, from outside it (None before ``start``).
    meter: Meter | None

    async def start(self, deadline_s: float) -> None: ...

    async def call(self, request: dict[str, Any], deadline_s: float) -> dict[str, Any]: ...

    async def kill(self, error: StrategyError) -> None:
        """Stop the server now (from any task); a call in flight then raises ``error``."""
        ...

    async def close(self) -> None: ...


class ThreadedTransport:
    """Runs a blocking channel on a private thread; subclasses implement the ``_sync`` parts."""

    name = "threaded"

    def __init__(self) -> None:
        self._executor = ThreadPoolExecutor(1, thread_name_prefix=f"galapagos-{self.name}")
        self.dead: StrategyError | None = None
        self.meter: Meter | None = None
        #: Set by :meth:`kill`: why the judge stopped the server (wins over what EOF suggests).
        self.killed: StrategyError | None = None
        self._closed = False

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    async def start(self, deadline_s: float) -> None:
        await self._run(self._start_sync, time.monotonic() + deadline_s)

    async def call(self, request: dict[str, Any], deadline_s: float) -> dict[str, Any]:
        if self._closed:
            raise StrategyError("the strategy server was closed", kind="crash")
        if self.dead is not None:
            raise StrategyError(f"the strategy server is gone ({self.dead})", kind=self.dead.kind)
        return await self._run(self._call_guarded, request, time.monotonic() + deadline_s)

    def _call_guarded(self, request: dict[str, Any], deadline: float) -> dict[str, Any]:
        try:
            response = self._call_sync(request, deadline)
        except TimeoutError:
            self._kill_sync()
            raise self._die(
                self.killed
                or StrategyError(
                    f"the strategy did not answer {request.get('op')!r} within its deadline",
                    kind="timeout",
                )
            ) from None
        except WireError as exc:
            self._kill_sync()
            raise self._die(
                self.killed
                or StrategyError(f"the strategy server broke the protocol: {exc}", kind="protocol")
            ) from None
        except OSError:
            response = None
        if response is None:
            raise self._die(self.killed or self._death_sync())
        if response.get("id") != request.get("id"):
            self._kill_sync()
            raise self._die(
                StrategyError("the strategy server answered out of turn", kind="protocol")
            )
        return response

    def _die(self, error: StrategyError) -> StrategyError:
        self.dead = error
        return error

    async def kill(self, error: StrategyError) -> None:
        # Not on the private thread: that one is blocked in the call being stopped.
        if self.killed is None:
            self.killed = error
        await asyncio.to_thread(self._kill_sync)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            await self._run(self._close_sync)
        finally:
            self._executor.shutdown(wait=False)

    # -- to implement ------------------------------------------------------------------------
    def _start_sync(self, deadline: float) -> None:
        raise NotImplementedError

    def _call_sync(self, request: dict[str, Any], deadline: float) -> dict[str, Any] | None:
        """Send one request, return the response; None when the server is gone (EOF)."""
        raise NotImplementedError

    def _death_sync(self) -> StrategyError:
        """Why the server is gone (crash, oom) — called after EOF."""
        raise NotImplementedError

    def _kill_sync(self) -> None:
        raise NotImplementedError

    def _close_sync(self) -> None:
        raise NotImplementedError


def _limit_memory(memory_mb: int) -> Callable[[], None]:
    def preexec() -> None:
        limit = memory_mb << 20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return preexec


class SubprocessTransport(ThreadedTransport):
    """The strategy server as a local subprocess.  UNSAFE: no isolation from this machine."""

    name = "local"

    def __init__(self, *, memory_mb: int = 1024, python: str | None = None) -> None:
        super().__init__()
        self.memory_mb = memory_mb
        self.python = python or sys.executable
        self.proc: subprocess.Popen[bytes] | None = None
        self._stderr = tempfile.TemporaryFile()

    def _start_sync(self, deadline: float) -> None:
        path = f"{_runtime.RUNTIME_DIR}{os.pathsep}{_runtime.COMPAT_DIR}"
        env = minimal_env(pythonpath=path, home=tempfile.gettempdir()) | {"PYTHONHASHSEED": "0"}
        self.proc = subprocess.Popen(  # noqa: S603 - our own server, fixed argv
            [self.python, "-P", "-s", "-m", "galapagos_strategy.server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
            start_new_session=True,
            preexec_fn=_limit_memory(self.memory_mb),
        )
        assert self.proc.stdin is not None
        os.set_blocking(self.proc.stdin.fileno(), False)
        self.meter = ProcMeter(self.proc.pid, memory_limit=self.memory_mb << 20)
        try:
            ready = self._read(deadline)
        except (TimeoutError, WireError) as exc:
            self._kill_sync()
            raise StrategyError(f"the strategy server did not start: {exc}", kind="crash") from exc
        if ready is None or ready.get("kind") != "ready":
            raise self._die(self._death_sync())

    def _read(self, deadline: float) -> dict[str, Any] | None:
        assert self.proc is not None and self.proc.stdout is not None
        frame = read_frame(self.proc.stdout.fileno(), max_frame=MAX_RESPONSE, deadline=deadline)
        return None if frame is None else frame[0]

    def _call_sync(self, request: dict[str, Any], deadline: float) -> dict[str, Any] | None:
        assert self.proc is not None and self.proc.stdin is not None
        try:
            write_all(self.proc.stdin.fileno(), encode_frame(request), deadline)
        except BrokenPipeError:
            return None
        return self._read(deadline)

    def _stderr_tail(self) -> str:
        with contextlib.suppress(OSError):
            size = self._stderr.seek(0, os.SEEK_END)
            self._stderr.seek(max(0, size - STDERR_KEEP))
            return self._stderr.read().decode("utf-8", "replace")
        return ""

    def _death_sync(self) -> StrategyError:
        code = None
        if self.proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = self.proc.wait(timeout=5.0)
        tail = self._stderr_tail()
        kind = "oom" if "MemoryError" in tail else "crash"
        return StrategyError(f"the strategy server exited (code {code}): {tail[-500:]}", kind=kind)

    def _kill_sync(self) -> None:
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5.0)

    def _close_sync(self) -> None:
        self._kill_sync()
        if self.proc is not None:
            for stream in (self.proc.stdin, self.proc.stdout):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
        self._stderr.close()
