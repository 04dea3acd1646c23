"""The offline meta-model: well-formed strategy variants, and hostile ones on request."""

from __future__ import annotations

import random

import pytest

from harness.evox.history import StrategyRecord
from harness.evox.meta import MARKER, build_prompt, read_strategy
from harness.evox.prefilter import prefilter
from harness.evox.sandbox import LocalStrategyFactory
from harness.evox.seed import seed_source
from harness.llm.offline.responders import OfflineRequest, ResponseContext
from harness.llm.offline.strategy_faults import (
    FAULT_KINDS,
    LATENT_FAULTS,
    directive,
    draw,
    parse_directive,
)
from harness.llm.offline.strategy_responder import STRATEGY_MARKER, answer_strategy
from harness.llm.offline.strategy_templates import parse_variant, random_variant, render
from tests.evox.conftest import valid_source

GATES = {
    "read_env": "prefilter",
    "read_files": "prefilter",
    "network": "prefilter",
    "fabricate": "bulk_add_sample",
    "excess_context": "bulk_add_sample",
}


def request(source: str, faults: dict[str, float] | None = None, seed: int = 1) -> OfflineRequest:
    parent = StrategyRecord("s1", source)
    prompt = build_prompt(
        parent=parent,
        others=[],
        task="toy",
        window="w",
        population="p",
        fault_directive=directive(faults or {}),
    )
    return OfflineRequest(
        "offline", tuple((m["role"], m["content"]) for m in prompt.messages()), seed
    )


def test_the_responder_detects_the_rewrite_prompt_heading() -> None:
    assert STRATEGY_MARKER == MARKER
    assert MARKER in request(seed_source()).text


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


def test_the_fault_directive_round_trips_and_draws_at_its_rates() -> None:
    rates = {"crash_sample": 0.5, "network": 0.25}
    line = directive(rates)
    assert parse_directive("text\n" + line + "\nmore") == rates
    assert directive({}) == "" and directive({"hang": 0.0}) == ""
    with pytest.raises(ValueError, match="unknown"):
        directive({"explode": 0.1})
    rng = random.Random(0)
    draws = [draw(rates, rng) for _ in range(4000)]
    assert draws.count("crash_sample") == pytest.approx(2000, rel=0.1)
    assert draws.count("network") == pytest.approx(1000, rel=0.15)
    assert draws.count(None) == pytest.approx(1000, rel=0.15)


def test_fault_injection_follows_the_prompt() -> None:
    req = request(seed_source(), faults={"network": 1.0})
    answer = answer_strategy(req, ResponseContext(rng=random.Random(0)))
    assert "fault injection: network" in answer
    assert "socket" in (read_strategy(answer) or "")


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
