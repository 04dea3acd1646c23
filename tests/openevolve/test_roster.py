"""``Roster`` (ids by arrival, in chunks) against the ordered dict and lists it stands for.

The MAP-Elites population keeps its members and each island's members in rosters: a checkpoint
gets their chunks (unchanged chunks are the same lists from one state to the next), and the
selection policy draws from them as from ``list(island)``.  Through a random stream of joins and
leaves (chunks of 4, so chunks empty, get dropped and get packed) every reading must equal the
dict's, every seeded draw the list's, and a restore from the chunks and layout the roster itself.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from scaffolds.openevolve.roster import Roster, Without


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Roster, "CHUNK", 4)


def _same(roster: Roster, expected: dict[str, int]) -> None:
    ids = list(expected)
    assert list(roster) == ids and len(roster) == len(ids)
    assert [roster[i] for i in range(len(ids))] == ids
    assert [roster.index(k) for k in ids] == list(range(len(ids)))
    assert list(reversed(roster)) == ids[::-1]
    assert roster.values() == list(expected.values())
    assert [k for chunk in roster.id_chunks() for k in chunk] == ids
    assert [v for chunk in roster.value_chunks() for v in chunk] == list(expected.values())
    assert all(0 < len(chunk) <= Roster.CHUNK for chunk in roster.id_chunks())
    assert all(k in roster for k in ids) and "absent" not in roster
    with pytest.raises(IndexError):
        roster[len(ids)]


def test_a_roster_reads_and_draws_as_the_dict_and_list_it_stands_for() -> None:
    rng = random.Random(5)
    roster, expected = Roster(), {}
    handed: list[tuple[list[Any], list[Any]]] = []
    packed = 0
    for step in range(1200):
        if expected and rng.random() < 0.45:
            key = rng.choice(list(expected))
            del expected[key]
            chunks = len(roster.id_chunks())
            assert roster.discard(key) and not roster.discard(key)
            packed += len(roster.id_chunks()) < chunks - 1
        else:
            key = f"k{step}"
            expected[key] = step
            roster.add(key, step)
        if step % 7 == 0 and expected:  # an id already here keeps its place, takes the value
            key = rng.choice(list(expected))
            expected[key] = -step
            roster.add(key, -step)
        _same(roster, expected)
        ids = list(expected)
        if ids:
            seed = rng.random()
            a, b = random.Random(seed), random.Random(seed)
            assert a.choice(roster) == b.choice(ids)
            weights = [rng.random() for _ in ids]
            assert a.choices(roster, weights=weights, k=3) == b.choices(ids, weights=weights, k=3)
            excluded = set(rng.sample(ids, min(3, len(ids)))) | {"absent"}
            free = [k for k in ids if k not in excluded]
            view = Without(roster, excluded)
            assert list(view) == free and [view[i] for i in range(len(free))] == free
            n = min(len(free), rng.randint(1, 4))
            assert a.sample(view, n) == b.sample(free, n)
        if step % 3 == 0:  # what a checkpoint got stays as it was
            outer = [roster.id_chunks(), roster.value_chunks(), roster.layout()]
            handed.append((outer, json.loads(json.dumps(outer))))
        elif step % 5 < 2:  # the ids alone (an island's), or the values alone
            outer = [roster.id_chunks() if step % 5 else roster.value_chunks()]
            handed.append((outer, json.loads(json.dumps(outer))))
        if step % 50 == 0:  # a checkpoint as the store gives it back
            saved = json.loads(
                json.dumps([roster.id_chunks(), roster.value_chunks(), roster.layout()])
            )
            again = Roster.restore(*saved)
            _same(again, expected)
            assert again.layout() == roster.layout()
            for r in (roster, again):
                r.add("probe", 0)
            assert again.id_chunks() == roster.id_chunks()
            assert again.layout() == roster.layout()
            for r in (roster, again):
                r.discard("probe")
    assert packed  # sparse chunks were packed
    assert all(outer == copy for outer, copy in handed)


def test_unchanged_chunks_are_handed_out_again_and_a_changed_one_anew() -> None:
    roster = Roster((f"k{i}", i) for i in range(10))
    before = roster.id_chunks()
    assert roster.id_chunks() is before  # nothing changed: the very same lists
    assert roster.value_chunks() is roster.value_chunks() and roster.layout() is roster.layout()
    roster.discard("k5")  # chunk 1 of [0-3], [4-7], [8, 9]
    after = roster.id_chunks()
    assert after[0] is before[0] and after[2] is before[2]
    assert after[1] is not before[1] and before[1] == ["k4", "k5", "k6", "k7"]  # never changed
    assert after[1] == ["k4", "k6", "k7"]


def test_a_restore_without_a_layout_or_with_one_that_does_not_fit_packs_afresh() -> None:
    chunks = [["a", "b"], ["c"]]
    for layout in (None, [0, 1], [1, 0, 9], [0, 1, 2]):  # none, short, descending, too few
        roster = Roster.restore(chunks, [[1, 2], [3]], layout)
        assert list(roster.items()) == [("a", 1), ("b", 2), ("c", 3)]
        assert roster.layout() == [0, 3] and roster.id_chunks() == [["a", "b", "c"]]
    kept = Roster.restore(chunks, None, [2, 5, 21])
    assert kept.layout() == [2, 5, 21] and kept.values() == [None] * 3
