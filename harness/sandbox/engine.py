"""Waiting out the Docker engine: is it answering, and wait (bounded) until it does.

An engine restart (dockerd stopped and started again, as a package upgrade or an operator
does) takes seconds; a run should wait for it rather than charge its candidates or die.  The
wait is bounded by ``evaluator.engine_wait_s``: past it the run stops as interrupted
(:class:`~harness.core.errors.EngineUnavailable`) and ``galapagos resume`` continues it.

:class:`EngineWaiter` is the reusable piece: everything that shares an engine (a backend's
evaluations, an EvoX strategy, a bench cell) shares one wait per outage, so an outage is
announced once, cleaned up after once, and ends every waiter with the same verdict.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import docker
import docker.errors
import requests.exceptions

from harness.core.errors import EngineUnavailable, SandboxError

__all__ = ["EngineWaiter", "engine_reachable", "wait_for_engine"]

log = logging.getLogger(__name__)

#: Seconds between pings while the engine is down (it usually needs 1-5 s to come back).
POLL_S = 0.5


def engine_reachable(client: docker.DockerClient) -> bool:
    """Whether the engine answers.  A stopping dockerd removes its socket at once but keeps
    answering pings on connections already open for about a second, while every new request
    fails: on a Unix socket, the socket file must exist too."""
    socket_path = getattr(getattr(client.api, "_custom_adapter", None), "socket_path", None)
    if socket_path and not os.path.exists(socket_path):
        return False
    try:
        return bool(client.ping())
    except (docker.errors.DockerException, requests.exceptions.RequestException, OSError):
        return False


@dataclass
class _Outage:
    done: threading.Event = field(default_factory=threading.Event)
    error: EngineUnavailable | None = None


class EngineWaiter:
    """One bounded wait per engine outage, shared by every thread that meets it.

    :meth:`wait` returns at once (0.0) while ``probe()`` says the engine answers.  Otherwise the
    first caller waits, polling every ``poll_s``: it says so through ``notice`` (once per
    outage, naming the deadline's config key), and when the engine is back runs ``on_return``
    (re-check images, clean up what the outage left) before anyone goes on.  Callers arriving
    during an outage join that wait instead of starting their own; past ``deadline_s`` every one
    of them raises :class:`~harness.core.errors.EngineUnavailable`.  :meth:`close` ends a wait
    in progress with a :class:`~harness.core.errors.SandboxError` (the owner is shutting down).
    """

    def __init__(
        self,
        probe: Callable[[], bool],
        deadline_s: float,
        *,
        on_return: Callable[[float], None] | None = None,
        notice: Callable[[str], None] | None = None,
        poll_s: float = POLL_S,
        config_key: str = "evaluator.engine_wait_s",
    ) -> None:
        self.probe = probe
        self.deadline_s = deadline_s
        self.on_return = on_return
        self.notice = notice or log.warning
        self.poll_s = poll_s
        self.config_key = config_key
        self._lock = threading.Lock()
        self._outage: _Outage | None = None
        self._closed = threading.Event()
        #: Outages waited out so far (for callers that need to know one happened).
        self.outages = 0

    def wait(self, why: str = "") -> float:
        """Block until the engine answers; the seconds this caller waited."""
        with self._lock:
            outage = self._outage
        if outage is None:
            if self.probe():
                return 0.0
            with self._lock:
                outage = self._outage
                leader = outage is None
                if outage is None:
                    outage = self._outage = _Outage()
        else:
            leader = False
        started = time.monotonic()
        if not leader:
            outage.done.wait()
            if outage.error is not None:
                raise EngineUnavailable(str(outage.error)) from outage.error
            if self._closed.is_set():
                raise SandboxError("stopped waiting for the Docker engine: shutting down")
            return time.monotonic() - started
        try:
            waited = self._wait_out(why, started)
            self.outages += 1
            if self.on_return is not None:
                self.on_return(waited)
            return waited
        except EngineUnavailable as exc:
            outage.error = exc
            raise
        finally:
            with self._lock:
                self._outage = None
            outage.done.set()

    def _wait_out(self, why: str, started: float) -> float:
        self.notice(
            f"the Docker engine is not answering ({why or 'unreachable'}); waiting up to "
            f"{self.deadline_s:g} s for it to come back ({self.config_key})"
        )
        while time.monotonic() - started < self.deadline_s:
            if self._closed.wait(self.poll_s):
                raise SandboxError("stopped waiting for the Docker engine: shutting down")
            if self.probe():
                waited = time.monotonic() - started
                self.notice(f"the Docker engine is back after {waited:.1f} s; going on")
                return waited
        raise EngineUnavailable(
            f"the Docker engine stayed unreachable for {self.deadline_s:g} s "
            f"({why or 'no answer'}); start it (bash scripts/docker-engine.sh) and continue the "
            "run with galapagos resume"
        )

    def close(self) -> None:
        """End any wait in progress (and every later one) at once."""
        self._closed.set()


def wait_for_engine(
    client: docker.DockerClient,
    deadline_s: float,
    *,
    why: str = "",
    notice: Callable[[str], None] | None = None,
) -> float:
    """Block until the engine answers; the seconds waited.  Raises
    :class:`EngineUnavailable` after ``deadline_s``.  (A one-off wait: callers that share an
    engine should share an :class:`EngineWaiter`.)"""
    return EngineWaiter(lambda: engine_reachable(client), deadline_s, notice=notice).wait(why)
