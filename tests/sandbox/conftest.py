"""Sandbox suite fixtures: images built once, a cold Docker backend, and the leak check.

Every test here fails if it leaves a container behind (``no_leaked_containers``, filtered by
this process's owner label, so concurrent runs on the same engine do not interfere).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from harness.sandbox.pytest_plugin import no_leaked_containers  # noqa: F401  (fixture)


@pytest.fixture(autouse=True)
def _no_leaks(no_leaked_containers: None) -> None:  # noqa: F811
    """Autouse wrapper: the fixture itself stays opt-in for other suites."""


@pytest.fixture(scope="session")
def sandbox_images() -> dict[str, str]:
    """Build the evaluation image (a no-op when its recipe has not changed)."""
    from harness.sandbox.images import build_images

    return build_images(["python-eval"])


@pytest.fixture(scope="module")
def docker_backend(sandbox_images: dict[str, str]) -> Iterator[object]:
    """A Docker backend without a warm pool: one cold container per job."""
    from harness.sandbox.docker_backend import DockerBackend

    backend = DockerBackend(pool_size=0)
    yield backend
    backend.close()
