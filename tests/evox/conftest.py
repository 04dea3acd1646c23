"""Fixtures for the EvoX tests: strategy sandboxes (local subprocess or real Docker)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from harness.sandbox.pytest_plugin import no_leaked_containers  # noqa: F401 (fixture)
from scaffolds.evox.factory import (
    ContainerLimits,
    LocalStrategyFactory,
    StrategyFactory,
    make_factory,
)
from scaffolds.evox.labels import default_labels
from scaffolds.evox.prefilter import prefilter
from scaffolds.evox.valid import ValidConfig
from strategy_tests import ValidationReport, validate, validate_source

#: Valid(·) sized for tests: a 200-program stress, tight time and memory bounds.
TEST_VALID = ValidConfig(
    stress_programs=200,
    stress_every=10,
    max_call_s=1.0,
    max_rss_mb=100,
    limits=ContainerLimits(memory_mb=512, call_s=10.0, bulk_s=60.0),
)


async def valid(
    source: str, factory: StrategyFactory, config: ValidConfig = TEST_VALID
) -> ValidationReport:
    """Valid(·) without the pre-filter, in sandboxes from ``factory``."""
    return await validate(
        source,
        clients=lambda: factory.client(config.limits),
        labels=default_labels(),
        config=config,
    )


async def valid_source(
    source: str, factory: StrategyFactory, config: ValidConfig = TEST_VALID
) -> ValidationReport:
    """The pre-filter, then Valid(·), as ``galapagos strategy validate`` runs them."""
    return await validate_source(
        source,
        clients=lambda: factory.client(config.limits),
        labels=default_labels(),
        config=config,
        gate=prefilter,
    )


@pytest.fixture
def local_factory() -> LocalStrategyFactory:
    """Strategies as host subprocesses: only for the trusted fixtures written in these tests."""
    return LocalStrategyFactory()


@pytest.fixture(scope="session")
def docker_factory() -> Iterator[StrategyFactory]:
    from harness.sandbox.images import build_images

    build_images(["python-eval"])
    factory = make_factory("docker")
    yield factory
    factory.close()
