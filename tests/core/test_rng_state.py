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


def test_a_moved_rng_shares_its_unchanged_words_and_its_state_stays_exact() -> None:
    """Between twists (every 624 draws) only the position changes: the new list holds the same
    int objects as the last one (a checkpoint delta compares them by identity), and every
    state handed out equals ``getstate()`` then, across twists and ``gauss`` draws too."""
    rng = random.Random(11)
    shared = 0
    handed: list[tuple[list, list]] = []
    for step in range(1500):
        rng.gauss(0, 1) if step % 97 == 0 else rng.random()
        before = rng_state(rng) if handed else None
        state = rng_state(rng)
        version, internal, gauss = rng.getstate()
        assert state == [version, list(internal), gauss]
        if before is not None:
            assert state is before
        if handed:
            last = handed[-1][0]
            if last[1][:-1] == state[1][:-1]:
                shared += 1
                assert all(a is b for a, b in zip(last[1][:-1], state[1][:-1], strict=True))
        handed.append((state, [state[0], list(state[1]), state[2]]))
    assert shared > 1000  # most draws moved only the position
    for state, copy in handed:  # no list handed out was changed afterwards
        assert state == copy
