"""How the host reaches a strategy server: the :class:`Transport` seam and its one implementation.

A transport carries one request frame and brings back one response frame under a deadline.
Anything that is not a well-formed response in time (the server died, hung, ran out of memory,
sent garbage) becomes :class:`~harness.core.errors.StrategyError` with a ``kind`` and leaves
the transport dead; the caller never sees engine or OS errors.

:class:`SessionTransport` speaks to a server in a sandbox *session*
(:mod:`harness.sandbox.sessions`): a hardened container of the run's Runtime (the real
boundary), or, with ``--sandbox local``, an UNSAFE host subprocess.  EvoX never picks or
touches the sandbox itself: it gets a :class:`~harness.sandbox.sessions.SessionBackend`.

Blocking channel I/O runs on one private thread per transport, so calls stay ordered.  Two
things happen beside that thread, from the judge's side: :attr:`Transport.meter` reads what the
server costs from the kernel (see :mod:`harness.sandbox.usage`), and :meth:`Transport.kill`
stops the server at once — the call waiting on the private thread then fails with the reason
the judge gave, not as a crash.  A call (and the start) holds a slot of the Runtime's
container cap while it runs.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, TypeVar

from galapagos_sandbox.wire import WireError, encode_frame

from harness.core.errors import InfrastructureFault, SandboxError, StrategyError
from harness.sandbox.sessions import Session, SessionBackend, SessionSpec
from harness.sandbox.usage import Meter

__all__ = ["MAX_RESPONSE", "SessionTransport", "ThreadedTransport", "Transport"]

#: Largest response frame accepted from a strategy server.
MAX_RESPONSE = 4 << 20
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


class SessionTransport(ThreadedTransport):
    """A strategy server in a sandbox session (see the module docstring)."""

    def __init__(self, sessions: SessionBackend, spec: SessionSpec) -> None:
        self.name = sessions.kind
        super().__init__()
        self.sessions = sessions
        self.spec = spec
        self.session: Session | None = None

    @property
    def shipped(self) -> bool:
        """Whether the host sent the server code (the image's copy differed)."""
        return self.session is not None and self.session.shipped

    async def start(self, deadline_s: float) -> None:
        async with self.sessions.slot():
            await super().start(deadline_s)

    async def call(self, request: dict[str, Any], deadline_s: float) -> dict[str, Any]:
        async with self.sessions.slot():
            return await super().call(request, deadline_s)

    def _start_sync(self, deadline: float) -> None:
        self.session = session = self.sessions.open(self.spec)
        try:
            booted = session.boot(deadline)
            self.meter = session.meter
            ready = session.recv(deadline) if booted else None
            if ready is None or ready.get("kind") != "ready":
                raise self._die(self._death_sync())
        except BaseException as exc:
            session.close()
            if isinstance(exc, StrategyError | SandboxError):  # InfrastructureFault included
                raise
            if isinstance(exc, TimeoutError | WireError | OSError):
                raise StrategyError(
                    f"the strategy sandbox did not start: {exc}", kind="crash"
                ) from exc
            raise

    def _call_sync(self, request: dict[str, Any], deadline: float) -> dict[str, Any] | None:
        assert self.session is not None
        self.session.reset_output_budget()  # before sending: the answer may arrive at once
        try:
            self.session.send(encode_frame(request), deadline)
        except BrokenPipeError:
            return None
        return self.session.recv(deadline)

    def _death_sync(self) -> StrategyError:
        if self.session is None:
            raise InfrastructureFault("the strategy sandbox never started")
        ended = self.session.exit(10.0)  # InfrastructureFault when stopped from outside
        if ended.oom:
            return StrategyError("the strategy sandbox exceeded its memory limit", kind="oom")
        return StrategyError(
            f"the strategy server exited (code {ended.code}): {ended.stderr_tail}", kind="crash"
        )

    def _kill_sync(self) -> None:
        if self.session is not None:
            self.session.kill()

    def _close_sync(self) -> None:
        if self.session is not None:
            self.session.close()
