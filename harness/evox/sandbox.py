"""Where strategy servers run: one factory per sandbox kind, with the limits from the config.

``docker`` (default): a long-lived hardened container per strategy (see
:mod:`harness.evox.docker_transport`).  ``local``: a host subprocess — UNSAFE for LLM-written
code, only for machines without Docker (it follows the run's ``evaluator.sandbox`` choice, which
must be opted into explicitly) and for tests of trusted fixtures.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal, Protocol

import docker

from harness.evox.client import StrategyClient
from harness.evox.docker_transport import DockerTransport, docker_client
from harness.evox.transport import SubprocessTransport, Transport
from harness.sandbox import images
from harness.sandbox.docker_backend import ENGINE_WAIT_S
from harness.sandbox.engine import wait_for_engine
from harness.sandbox.protocol import Limits

__all__ = [
    "ContainerLimits",
    "DockerStrategyFactory",
    "LocalStrategyFactory",
    "StrategyFactory",
    "make_factory",
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


class DockerStrategyFactory:
    kind = "docker"

    def __init__(
        self,
        *,
        image: str = "python-eval",
        run_id: str | None = None,
        client: docker.DockerClient | None = None,
        runtime: str | None = None,
        engine_wait_s: float = ENGINE_WAIT_S,
    ) -> None:
        self._docker = client
        self.engine_wait_s = engine_wait_s
        self.image_name = image
        self.run_id = run_id
        self.runtime = runtime
        self._tag: str | None = None

    @property
    def docker(self) -> docker.DockerClient:
        if self._docker is None:
            self._docker = docker_client()
        return self._docker

    def image(self) -> str:
        if self._tag is None:
            self._tag = images.image_tag(self.image_name)
        return self._tag

    def transport(self, limits: ContainerLimits) -> Transport:
        return DockerTransport(
            self.docker,
            image=self.image(),
            limits=limits.sandbox_limits(),
            run_id=self.run_id,
            runtime=self.runtime,
        )

    def client(self, limits: ContainerLimits) -> StrategyClient:
        return StrategyClient(
            self.transport(limits), deadline_s=limits.call_s, start_s=limits.bulk_s
        )

    def recover(self, why: str) -> None:
        wait_for_engine(self.docker, self.engine_wait_s, why=why)
        self._tag = None  # the image is looked up (and rebuilt if lost) again

    def close(self) -> None:
        """Release the engine connection (a later ``client()`` reconnects)."""
        if self._docker is not None:
            self._docker.close()
            self._docker = None


class LocalStrategyFactory:
    """UNSAFE: strategies run as host subprocesses (rlimits only)."""

    kind = "local"

    def __init__(self) -> None:
        log.warning("EvoX strategies run as local subprocesses: UNSAFE for LLM-written code")

    def client(self, limits: ContainerLimits) -> StrategyClient:
        return StrategyClient(
            SubprocessTransport(memory_mb=limits.memory_mb),
            deadline_s=limits.call_s,
            start_s=limits.bulk_s,
        )

    def recover(self, why: str) -> None:
        return None  # a local subprocess has no engine to wait for

    def close(self) -> None:
        return None


def make_factory(
    sandbox: Literal["docker", "local"],
    *,
    image: str = "python-eval",
    run_id: str | None = None,
    engine_wait_s: float = ENGINE_WAIT_S,
) -> StrategyFactory:
    if sandbox == "local":
        return LocalStrategyFactory()
    return DockerStrategyFactory(image=image, run_id=run_id, engine_wait_s=engine_wait_s)
