"""Hostile strategies against real Docker: each is stopped by the pre-filter, by Valid(·), or —
if it only misbehaves at run time — by the fallback chain, with no program lost and nothing on
the host touched."""

from __future__ import annotations

import random
from pathlib import Path

import docker
import pytest

from harness.llm.offline.strategy_faults import LATENT_FAULTS
from harness.llm.offline.strategy_templates import random_variant, render
from harness.sandbox import ownership
from scaffolds.evox.factory import StrategyFactory
from tests.evox.conftest import valid_source
from tests.evox.fakes import OfflineChat, evox_run
from tests.evox.strategies import GOOD

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("no_leaked_containers")]
RUN = "evox-test"
#: How each latent fault shows up when it fires.
FAILURE_KIND = {"crash_sample": "raised", "crash_add": "raised", "hang": "timeout", "alloc": "oom"}
GATE = {
    "fabricate": "bulk_add_sample",
    "excess_context": "bulk_add_sample",
    "read_env": "prefilter",
    "read_files": "prefilter",
    "network": "prefilter",
}


def my_strategy_containers() -> list[str]:
    client = docker.from_env()
    try:
        found = client.containers.list(
            all=True,
            filters={
                "label": [
                    f"{ownership.ROLE_LABEL}=strategy",
                    f"{ownership.OWNER_LABEL}={ownership.owner_id()}",
                ]
            },
        )
        return [c.name for c in found]
    finally:
        client.close()


@pytest.mark.parametrize("fault", sorted(GATE))
async def test_hostile_code_is_rejected_before_deployment(
    fault: str, docker_factory: StrategyFactory
) -> None:
    code = render(random_variant(random.Random(fault)), fault)
    report = await valid_source(code, docker_factory)
    assert report.failure is not None and report.failure.name == GATE[fault]
    assert my_strategy_containers() == []


@pytest.mark.parametrize("fault", LATENT_FAULTS)
async def test_latent_faults_fall_back_at_run_time_and_lose_nothing(
    fault: str, docker_factory: StrategyFactory, tmp_path: Path
) -> None:
    hostile = render(random_variant(random.Random(fault)), fault, fuse=2)
    overrides = [
        "memory.switch_interval=3",
        "selection_policy.container.call_timeout_s=2.0",
        "selection_policy.container.memory_mb=256",
    ]
    chat = OfflineChat(strategies=[hostile, GOOD, GOOD, GOOD])
    ctl, scaffold, store, _ = evox_run(
        tmp_path, docker_factory, iterations=14, chat=chat, overrides=overrides
    )
    try:
        summary = await ctl.run_to_end()
    finally:
        await scaffold.aclose()
    assert summary.status == "completed" and summary.iterations_done == 14
    failures = store.events(RUN, ["strategy_failure"])
    assert [e.payload["strategy"] for e in failures] == ["s1"]
    assert failures[0].payload["error_kind"] == FAILURE_KIND[fault]
    restore = store.events(RUN, ["strategy_restore"])
    assert restore[0].payload == {
        "iteration": failures[0].iteration,
        "broken": "s1",
        "restored": "seed",
        "readded": restore[0].payload["readded"],
    }
    stored = {p.id for p in store.programs(RUN)}
    assert stored == {p.id for p in scaffold.population.programs()}
    assert stored <= scaffold.selection.chain.active.known
    assert my_strategy_containers() == []  # the broken and the rest are all removed
