"""Where strategy servers run: a factory of strategy clients over a sandbox session backend.

A run's factory is built from the :class:`~harness.sandbox.sessions.SessionBackend` its
Runtime serves (the ``sessions`` a block gets, see :mod:`harness.core.blocks`): hardened
containers under the Runtime's container cap, canaries and orphan reaping, or, when the run
explicitly chose ``evaluator.sandbox: local``, host subprocesses (UNSAFE for LLM-written code).
EvoX never picks the sandbox itself.  :func:`make_factory` makes one outside any run
(``galapagos strategy validate``, tests).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal, Protocol

from harness.sandbox.protocol import Limits
from harness.sandbox.sessions import LocalSessions, SessionBackend, SessionSpec, make_sessions
from scaffolds.evox.client import StrategyClient
from scaffolds.evox.records import Labels
from scaffolds.evox.strategies import RemoteStrategy
from scaffolds.evox.transport import SessionTransport

__all__ = [
    "ContainerLimits",
    "LocalStrategyFactory",
    "SessionStrategyFactory",
    "StrategyFactory",
    "make_factory",
    "remote_strategy",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ContainerLimits:
    memory_mb: int = 512
    cpus: float = 1.0
    pids: int = 32
    tmpfs_mb: int = 16
    #: Deadline of one ``add``/``sample``/probe call.
    call_s: float = 5.0
    #: Deadline of one bulk ``add`` (a migration batch) and of the server's start-up.
    bulk_s: float = 60.0

    def sandbox_limits(self) -> Limits:
        return Limits(
            wall_s=self.bulk_s,
            memory_mb=self.memory_mb,
            cpus=self.cpus,
            pids=self.pids,
            tmpfs_mb=self.tmpfs_mb,
        )


class StrategyFactory(Protocol):
    kind: str

    def client(self, limits: ContainerLimits) -> StrategyClient:
        """A client for a new, not yet started strategy server."""
        ...

    def recover(self, why: str) -> None:
        """After an infrastructure fault: wait (bounded) until new servers can start again;
        raises :class:`~harness.core.errors.EngineUnavailable` past the deadline."""
        ...

    def close(self) -> None: ...


class SessionStrategyFactory:
    """Strategy clients whose servers run in sessions of ``sessions``."""

    def __init__(
        self,
        sessions: SessionBackend,
        *,
        image: str = "python-eval",
        run_id: str | None = None,
    ) -> None:
        self.sessions = sessions
        self.kind = sessions.kind
        self.image = image
        self.run_id = run_id

    def client(self, limits: ContainerLimits) -> StrategyClient:
        spec = SessionSpec(limits=limits.sandbox_limits(), image=self.image, run_id=self.run_id)
        return StrategyClient(
            SessionTransport(self.sessions, spec), deadline_s=limits.call_s, start_s=limits.bulk_s
        )

    def recover(self, why: str) -> None:
        self.sessions.recover(why)

    def close(self) -> None:
        """Release what the factory holds (its Runtime keeps a shared backend open)."""
        self.sessions.close()


class LocalStrategyFactory(SessionStrategyFactory):
    """UNSAFE: strategies run as host subprocesses (rlimits only)."""

    def __init__(self) -> None:
        log.warning("EvoX strategies run as local subprocesses: UNSAFE for LLM-written code")
        super().__init__(LocalSessions())


def make_factory(
    sandbox: Literal["docker", "local"],
    *,
    image: str = "python-eval",
    run_id: str | None = None,
    engine_wait_s: float | None = None,
) -> StrategyFactory:
    """A factory outside any run (its own session backend, closed by ``close()``)."""
    if sandbox == "local":
        return LocalStrategyFactory()
    return SessionStrategyFactory(
        make_sessions("docker", engine_wait_s=engine_wait_s), image=image, run_id=run_id
    )


def remote_strategy(
    factory: StrategyFactory,
    limits: ContainerLimits,
    labels: Labels,
    strategy_id: str,
    source: str,
    seed: int,
) -> RemoteStrategy:
    """A (not yet booted) strategy server in ``factory``'s sandboxes that survives
    infrastructure faults (it restarts its server and replays its calls)."""
    return RemoteStrategy(
        strategy_id,
        source,
        factory.client(limits),
        labels=labels,
        seed=seed,
        bulk_deadline_s=limits.bulk_s,
        respawn=lambda: factory.client(limits),
        recover=factory.recover,
    )
