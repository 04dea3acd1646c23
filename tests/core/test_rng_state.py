"""Checkpointed RNG states: an RNG that has not moved hands out the same list."""

from __future__ import annotations

import random

from harness.core.rng import rng_from_state, rng_state


def test_an_rng_that_did_not_move_hands_out_the_same_state() -> None:
    rng = random.Random(7)
    first = rng_state(rng)
    assert rng_state(rng) is first  # unchanged: the same list (a checkpoint delta skips it)
    rng.random()
    moved = rng_state(rng)
    assert moved is not first and moved != first
    rng_from_state(rng, first)  # moved back: equal to the first state again
    assert rng_state(rng) == first
    assert rng_from_state(random.Random(), moved).random() == rng_from_state(rng, moved).random()
