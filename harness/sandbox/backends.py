"""``make_backend``: one function from a backend name to a ready backend."""

from __future__ import annotations

from typing import Any

from harness.core.errors import ConfigError
from harness.sandbox.protocol import SandboxBackend

__all__ = ["BACKENDS", "make_backend"]

BACKENDS = ("docker", "local")


def make_backend(name: str = "docker", **opts: Any) -> SandboxBackend:
    """``docker`` (default): fresh hardened container per job, warm pool.

    ``local``: UNSAFE subprocess backend (no isolation), only for an explicit
    ``--sandbox local``.  Raises :class:`~harness.core.errors.SandboxUnavailable` when the Docker
    engine is not reachable, :class:`~harness.core.errors.ConfigError` for an unknown name.
    """
    if name == "docker":
        from harness.sandbox.docker_backend import DockerBackend

        return DockerBackend(**opts)
    if name == "local":
        from harness.sandbox.local_backend import LocalBackend

        return LocalBackend(**opts)
    raise ConfigError(f"unknown sandbox {name!r}; valid choices: {', '.join(BACKENDS)}")
