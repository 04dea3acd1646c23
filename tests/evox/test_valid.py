"""Valid(·): every check has a strategy that fails exactly that check; the seed passes all."""

from __future__ import annotations

import pytest

from scaffolds.evox.factory import LocalStrategyFactory
from scaffolds.evox.seed import seed_source
from strategy_tests import CHECK_NAMES
from tests.evox.conftest import TEST_VALID, valid, valid_source
from tests.evox.strategies import FAILS_EXACTLY, GOOD, module


async def test_the_seed_strategy_passes_every_check(local_factory: LocalStrategyFactory) -> None:
    report = await valid_source(seed_source(), local_factory)
    assert [c.name for c in report.checks] == list(CHECK_NAMES)
    assert report.passed, report.feedback()
    assert report.feedback() == ""


async def test_a_plain_well_behaved_strategy_passes(local_factory: LocalStrategyFactory) -> None:
    report = await valid(GOOD, local_factory)
    assert report.passed, report.feedback()


async def test_a_strategy_is_compiled_without_the_runtimes_future_flags(
    local_factory: LocalStrategyFactory,
) -> None:
    """The strategy server's modules use ``from __future__ import annotations``; the strategy
    module it loads must not inherit it (its annotations are the objects it wrote)."""
    probe = (
        "class _Probe:\n    x: int\n"
        "if _Probe.__annotations__['x'] is not int:\n"
        "    raise RuntimeError('annotation ' + repr(_Probe.__annotations__['x']))\n"
    )
    report = await valid(GOOD + probe, local_factory)
    assert report.passed, report.feedback()


def test_every_check_has_a_strategy_that_fails_it() -> None:
    assert set(FAILS_EXACTLY) | {"prefilter"} == set(CHECK_NAMES)


@pytest.mark.parametrize("check", sorted(FAILS_EXACTLY))
async def test_each_strategy_fails_exactly_its_check(
    check: str, local_factory: LocalStrategyFactory
) -> None:
    report = await valid(FAILS_EXACTLY[check], local_factory)
    failed = report.failure
    assert failed is not None and failed.name == check, report.to_dict()
    # A bound the judge enforces on every call (call_time, memory, threads) stops the check
    # that was running, which names it as its cause; every other check passed before, or is
    # skipped after.
    first = next(c for c in report.checks if c.status == "fail")
    assert first.name == check or first.cause == check, report.to_dict()
    order = [c.name for c in report.checks]
    for c in report.checks:
        if c.name in (first.name, check):
            assert c.status == "fail"
        elif order.index(c.name) < order.index(first.name):
            assert c.status == "pass", report.to_dict()
        else:
            assert c.status == "skipped", report.to_dict()
    assert f"'{check}'" in report.feedback()


async def test_the_prefilter_stops_a_strategy_before_any_sandbox_starts() -> None:
    class NoSandbox:
        kind = "none"

        def client(self, limits: object) -> None:
            raise AssertionError("a sandbox was started for a pre-filtered strategy")

        def close(self) -> None:
            return None

    report = await valid_source("import os\n" + GOOD, NoSandbox())
    assert report.failure is not None and report.failure.name == "prefilter"
    assert "import of 'os'" in report.feedback()
    assert {c.status for c in report.checks[1:]} == {"skipped"}


async def test_the_migration_failure_explains_the_isinstance_trap(
    local_factory: LocalStrategyFactory,
) -> None:
    report = await valid(FAILS_EXACTLY["migration"], local_factory)
    assert "isinstance(p, EvolvedProgram)" in report.feedback()


@pytest.mark.slow
async def test_a_spinning_call_is_stopped_by_the_cpu_limit_at_its_first_call(
    local_factory: LocalStrategyFactory,
) -> None:
    spin = GOOD.replace("        self._n += 1\n", "        while True:\n            pass\n", 1)
    report = await valid(spin, local_factory)
    assert report.failure is not None and report.failure.name == "call_time"
    stopped = report.check("bulk_add_sample")  # the first sample() ever made
    assert stopped.status == "fail" and stopped.cause == "call_time"
    assert "sample() used" in report.failure.detail and "was stopped" in report.failure.detail


async def test_a_call_that_blocks_without_cpu_fails_on_the_deadline(
    local_factory: LocalStrategyFactory,
) -> None:
    from dataclasses import replace

    from scaffolds.evox.factory import ContainerLimits

    block = module(imports="import time", sample="time.sleep(60)")
    config = replace(TEST_VALID, limits=ContainerLimits(call_s=1.0))
    report = await valid(block, local_factory, config)
    assert report.failure is not None and report.failure.name == "bulk_add_sample"
    assert "timeout" in report.failure.detail


async def test_a_strategy_without_sample_fails_structure_naming_the_method(
    local_factory: LocalStrategyFactory,
) -> None:
    renamed = GOOD.replace("def sample(self,", "def sampleX(self,")
    report = await valid(renamed, local_factory)
    failed = report.failure
    assert failed is not None and failed.name == "structure", report.to_dict()
    assert "sample" in failed.detail and "abstract" in failed.detail
