"""The offline meta-model: well-formed strategy variants, and hostile ones on request."""

from __future__ import annotations

import random

import pytest

from harness.llm.config import FaultRates
from harness.llm.offline.responders import OfflineRequest, ResponseContext
from harness.llm.offline.server import answer, default_responders
from harness.llm.offline.strategy_faults import FAULT_KINDS, LATENT_FAULTS, check_rates, draw
from harness.llm.offline.strategy_responder import answer_strategy, strategy_responder
from harness.llm.offline.strategy_templates import parse_variant, random_variant, render
from scaffolds.evox.factory import LocalStrategyFactory
from scaffolds.evox.history import StrategyRecord
from scaffolds.evox.meta import build_prompt, read_strategy
from scaffolds.evox.prefilter import prefilter
from scaffolds.evox.seed import seed_source
from tests.evox.conftest import valid_source

GATES = {
    "read_env": "prefilter",
    "read_files": "prefilter",
    "network": "prefilter",
    "fabricate": "bulk_add_sample",
    "excess_context": "bulk_add_sample",
}


def request(source: str, seed: int = 1) -> OfflineRequest:
    parent = StrategyRecord("s1", source)
    prompt = build_prompt(parent=parent, others=[], task="toy", window="w", population="p")
    messages = tuple((m["role"], m["content"]) for m in prompt.messages())
    return OfflineRequest("offline", messages, seed, purpose="strategy")


def test_the_default_chain_answers_strategy_calls_with_a_strategy() -> None:
    text = answer(
        request(seed_source()), seed=0, faults=FaultRates(), responders=default_responders()
    )
    assert "not from an LLM" in text and "EvolvedProgramDatabase" in (read_strategy(text) or "")


def test_answers_are_deterministic_and_vary_with_the_seed() -> None:
    req = request(seed_source())
    first = answer_strategy(req, ResponseContext(rng=random.Random(5)))
    assert first == answer_strategy(req, ResponseContext(rng=random.Random(5)))
    assert first != answer_strategy(req, ResponseContext(rng=random.Random(6)))
    assert "not from an LLM" in first


def test_a_variant_of_an_offline_strategy_changes_one_thing() -> None:
    base = random_variant(random.Random(3))
    answer = answer_strategy(request(render(base)), ResponseContext(rng=random.Random(9)))
    code = read_strategy(answer)
    assert code is not None
    new = parse_variant(code)
    assert new is not None
    changed = [
        f
        for f in ("parent", "parent_param", "context", "label", "label_param")
        if getattr(new, f) != getattr(base, f)
    ]
    assert len(changed) <= 2  # a rule change brings its own parameter


async def test_well_formed_answers_pass_the_prefilter_and_valid(
    local_factory: LocalStrategyFactory,
) -> None:
    for seed in range(4):
        answer = answer_strategy(
            request(seed_source(), seed=seed), ResponseContext(rng=random.Random(seed))
        )
        code = read_strategy(answer)
        assert code is not None
        report = await valid_source(code, local_factory)
        assert report.passed, report.feedback()


def test_fault_rates_are_checked_and_drawn_at_their_rates() -> None:
    rates = {"crash_sample": 0.5, "network": 0.25}
    assert check_rates(rates) == rates and check_rates({}) == {}
    with pytest.raises(ValueError, match="unknown strategy fault kinds"):
        check_rates({"explode": 0.1})
    with pytest.raises(ValueError, match="sum to at most 1"):
        strategy_responder(faults={"hang": 0.7, "alloc": 0.7})
    rng = random.Random(0)
    draws = [draw(rates, rng) for _ in range(4000)]
    assert draws.count("crash_sample") == pytest.approx(2000, rel=0.1)
    assert draws.count("network") == pytest.approx(1000, rel=0.15)
    assert draws.count(None) == pytest.approx(1000, rel=0.15)


def test_fault_injection_follows_the_responders_rates_and_leaves_clean_answers_alone() -> None:
    req = request(seed_source())
    hostile = strategy_responder(faults={"network": 1.0}).respond(
        req, ResponseContext(rng=random.Random(0))
    )
    assert "fault injection: network" in hostile
    assert "socket" in (read_strategy(hostile) or "")
    # Rates that draw no fault give the answer the responder without rates gives.
    for seed in range(10):
        clean = strategy_responder().respond(req, ResponseContext(rng=random.Random(seed)))
        zero = strategy_responder(faults={"hang": 0.0}).respond(
            req, ResponseContext(rng=random.Random(seed))
        )
        assert clean == zero and "fault injection" not in clean


@pytest.mark.parametrize("fault", FAULT_KINDS)
async def test_each_hostile_kind_meets_its_gate(
    fault: str, local_factory: LocalStrategyFactory
) -> None:
    code = render(random_variant(random.Random(fault)), fault, fuse=2)
    report = await valid_source(code, local_factory)
    if fault in LATENT_FAULTS:
        assert report.passed, report.feedback()  # only the fallback chain can catch it
    else:
        assert report.failure is not None and report.failure.name == GATES[fault]
    if GATES.get(fault) == "prefilter":
        assert not prefilter(code).ok
