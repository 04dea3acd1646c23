"""Checkpointed RNG states: an RNG that has not moved hands out the same list."""

from __future__ import annotations

import random

import pytest

from harness.core import rng as rng_module
from harness.core.rng import TrackedRandom, make_rng, rng_from_state, rng_state
from harness.core.store import LastChanged
from harness.store._delta import diff


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


@pytest.mark.parametrize("word_model", [True, False])
def test_a_tracked_rng_draws_what_random_draws_and_its_state_stays_exact(
    word_model: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``make_rng`` hands out a ``TrackedRandom``: every draw method gives what a plain
    ``random.Random`` with the same seed gives, and ``rng_state`` (which skips reading the state
    of one that has not moved) always equals ``getstate()``, through every kind of draw, a
    ``gauss`` that hands out its kept value without drawing, ``setstate`` and ``seed``; a
    moved one whose words did not change gets the last list's int objects.  Also with the
    word count unused (an interpreter whose generator it does not match reads every state)."""
    assert rng_module._WORD_MODEL  # noqa: SLF001 - this interpreter's generator matches
    monkeypatch.setattr(rng_module, "_WORD_MODEL", word_model)
    tracked, plain = TrackedRandom(5), random.Random(5)
    draws = [
        lambda r: r.random(),
        lambda r: r.getrandbits(7),
        lambda r: r.getrandbits(100),
        lambda r: r.getrandbits(0),
        lambda r: r.getrandbits(30000),  # more words than the state holds: made anew
        lambda r: r.randint(-2, 2),
        lambda r: r.choice(range(1000)),
        lambda r: r.choices(range(50), weights=range(1, 51), k=3),
        lambda r: r.sample(range(2000), 3),
        lambda r: r.shuffle(list(range(20))),
        lambda r: r.uniform(0, 1),
        lambda r: r.gauss(0, 1),
        lambda r: r.randbytes(5),
        lambda r: r.normalvariate(0, 1),
        lambda r: None,  # no draw: the same list again
    ]
    pick = random.Random(3)
    kept: list[tuple[list, list]] = []
    for step in range(3000):
        draw = draws[pick.randrange(len(draws))]
        before = rng_state(tracked)
        assert draw(tracked) == draw(plain)
        state = rng_state(tracked)
        version, internal, gauss = tracked.getstate()
        assert state == [version, list(internal), gauss] and tracked.getstate() == plain.getstate()
        if draw is draws[-1]:
            assert state is before
        elif state[1][:-1] == before[1][:-1]:
            assert all(a is b for a, b in zip(state[1][:-1], before[1][:-1], strict=True))
        if step % 500 == 250:  # moved by setstate / seed: read again
            plain.seed(step)
            rng_from_state(tracked, rng_state(plain))
            assert rng_state(tracked) == rng_state(plain)
            tracked.seed(step + 1)
            plain.seed(step + 1)
            assert rng_state(tracked) == rng_state(plain)
        kept.append((state, [state[0], list(state[1]), state[2]]))
    for state, copy in kept:  # no list handed out was changed afterwards
        assert state == copy
    assert isinstance(make_rng(1, "x"), TrackedRandom)


@pytest.mark.parametrize("tracked", [True, False])
def test_a_moved_rngs_words_say_they_changed_only_their_last_item(tracked: bool) -> None:
    """The words of a state whose position alone moved are a ``LastChanged`` whose base is the
    words handed out before (so a checkpoint delta takes the position alone); the words before
    drop their own base (no chain of earlier states is kept alive); after a twist the words
    are new."""
    rng = make_rng(4, "x") if tracked else random.Random(4)
    rng.random()
    before = rng_state(rng)[1]
    said = 0
    for _ in range(1400):
        rng.random()
        words = rng_state(rng)[1]
        assert words == list(rng.getstate()[1])
        if type(words) is LastChanged:
            said += 1
            assert words.base is before and words[:-1] == before[:-1]
            assert len(words) == len(before) and words[-1] != before[-1]
            assert diff(before, words) == [["=", [len(words) - 1], words[-1]]]
            assert type(before) is not LastChanged or before.base is None  # one link at most
        before = words
    assert said > 1000
    stale = LastChanged([1, 2, 3], base=[1, 2, 4])  # a base other than the old list: compared
    assert diff([9, 2, 3], stale) == [["=", [0], 1]]
