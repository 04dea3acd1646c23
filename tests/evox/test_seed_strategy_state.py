"""The seed strategy's checkpoint: its order in chunks that stay the same objects once full,
and a checkpoint with the earlier flat ``order`` still restores the same strategy."""

from __future__ import annotations

import asyncio
import random

from harness.core.records import Program
from scaffolds.evox.strategies import SeedStrategy


def test_seed_strategy_state_round_trips_from_chunks_and_from_the_flat_order() -> None:
    strategy = SeedStrategy(random.Random(1))
    programs = [Program(f"p{i}", "x\n", i, {}, 0.0) for i in range(2500)]
    first = None
    for program in programs:
        asyncio.run(strategy.add([program]))
        state = strategy.state_dict()
        if first is None and len(state["order_chunks"]) > 1:
            first = state["order_chunks"][0]
    assert first is not None and strategy.state_dict()["order_chunks"][0] is first
    flat = {"order": list(strategy.order), "rng": state["rng"]}
    answers = []
    for saved in (state, flat):
        again = SeedStrategy(random.Random(99))
        again.load_state_dict(saved)
        assert again.order == strategy.order and again.known == strategy.known
        assert again.state_dict() == state
        answers.append(asyncio.run(again.sample(4)))
    assert answers[0] == answers[1] == asyncio.run(strategy.sample(4))
