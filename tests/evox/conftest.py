"""Fixtures for the EvoX tests: strategy sandboxes (local subprocess or real Docker)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from harness.evox.sandbox import ContainerLimits, DockerStrategyFactory, LocalStrategyFactory
from harness.sandbox.pytest_plugin import no_leaked_containers  # noqa: F401 (fixture)
from strategy_tests import ValidConfig

#: Valid(·) sized for tests: a 200-program stress, tight time and memory bounds.
TEST_VALID = ValidConfig(
    stress_programs=200,
    stress_every=10,
    max_call_s=1.0,
    max_rss_mb=100,
    limits=ContainerLimits(memory_mb=512, call_s=10.0, bulk_s=60.0),
)


@pytest.fixture
def local_factory() -> LocalStrategyFactory:
    """Strategies as host subprocesses: only for the trusted fixtures written in these tests."""
    return LocalStrategyFactory()


@pytest.fixture(scope="session")
def docker_factory() -> Iterator[DockerStrategyFactory]:
    from harness.sandbox.images import build_images

    build_images(["python-eval"])
    factory = DockerStrategyFactory()
    yield factory
    factory.close()
