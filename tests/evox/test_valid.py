"""Valid(·): every check has a strategy that fails exactly that check; the seed passes all."""

from __future__ import annotations

import pytest

from harness.evox.labels import default_labels
from harness.evox.sandbox import LocalStrategyFactory
from harness.evox.seed import seed_source
from strategy_tests import CHECK_NAMES, validate, validate_source
from tests.evox.conftest import TEST_VALID
from tests.evox.strategies import FAILS_EXACTLY, GOOD


async def test_the_seed_strategy_passes_every_check(local_factory: LocalStrategyFactory) -> None:
    report = await validate_source(
        seed_source(), factory=local_factory, labels=default_labels(), config=TEST_VALID
    )
    assert [c.name for c in report.checks] == list(CHECK_NAMES)
    assert report.passed, report.feedback()
    assert report.feedback() == ""


async def test_a_plain_well_behaved_strategy_passes(local_factory: LocalStrategyFactory) -> None:
    report = await validate(GOOD, factory=local_factory, labels=default_labels(), config=TEST_VALID)
    assert report.passed, report.feedback()


def test_every_check_has_a_strategy_that_fails_it() -> None:
    assert set(FAILS_EXACTLY) | {"prefilter"} == set(CHECK_NAMES)


@pytest.mark.parametrize("check", sorted(FAILS_EXACTLY))
async def test_each_strategy_fails_exactly_its_check(
    check: str, local_factory: LocalStrategyFactory
) -> None:
    report = await validate(
        FAILS_EXACTLY[check], factory=local_factory, labels=default_labels(), config=TEST_VALID
    )
    statuses = {c.name: c.status for c in report.checks}
    order = [c.name for c in report.checks]
    failed = report.failure
    assert failed is not None and failed.name == check, report.to_dict()
    assert all(statuses[name] == "pass" for name in order[: order.index(check)])
    assert all(statuses[name] == "skipped" for name in order[order.index(check) + 1 :])
    assert f"'{check}'" in report.feedback()


async def test_the_prefilter_stops_a_strategy_before_any_sandbox_starts() -> None:
    class NoSandbox:
        kind = "none"

        def client(self, limits: object) -> None:
            raise AssertionError("a sandbox was started for a pre-filtered strategy")

        def close(self) -> None:
            return None

    report = await validate_source(
        "import os\n" + GOOD, factory=NoSandbox(), labels=default_labels(), config=TEST_VALID
    )
    assert report.failure is not None and report.failure.name == "prefilter"
    assert "import of 'os'" in report.feedback()
    assert {c.status for c in report.checks[1:]} == {"skipped"}


async def test_the_migration_failure_explains_the_isinstance_trap(
    local_factory: LocalStrategyFactory,
) -> None:
    report = await validate(
        FAILS_EXACTLY["migration"],
        factory=local_factory,
        labels=default_labels(),
        config=TEST_VALID,
    )
    assert "isinstance(p, EvolvedProgram)" in report.feedback()


async def test_a_hanging_strategy_fails_on_the_deadline(
    local_factory: LocalStrategyFactory,
) -> None:
    from dataclasses import replace

    from harness.evox.sandbox import ContainerLimits

    hang = GOOD.replace("        self._n += 1\n", "        while True:\n            pass\n", 1)
    config = replace(TEST_VALID, limits=ContainerLimits(call_s=1.0))
    report = await validate(hang, factory=local_factory, labels=default_labels(), config=config)
    assert report.failure is not None and report.failure.name == "bulk_add_sample"
    assert "timeout" in report.failure.detail


async def test_a_strategy_without_sample_fails_structure_naming_the_method(
    local_factory: LocalStrategyFactory,
) -> None:
    renamed = GOOD.replace("def sample(self,", "def sampleX(self,")
    report = await validate(
        renamed, factory=local_factory, labels=default_labels(), config=TEST_VALID
    )
    failed = report.failure
    assert failed is not None and failed.name == "structure", report.to_dict()
    assert "sample" in failed.detail and "abstract" in failed.detail
