"""Incremental checkpoints: a base plus a chain of deltas reads back exactly the state a full
re-serialisation would have written (values and the order of every dict's keys), for random
edits of nested states, through the writer and a fresh connection, for every shipped scaffold."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from harness.core.controller import Progress
from harness.core.errors import StoreError
from harness.core.registry import list_scaffolds
from harness.store import SQLiteReader, SQLiteStore
from harness.store._delta import apply, diff
from tests.conformance.runner import build, run
from tests.store.conftest import commit, program, run_record


def _json(value: Any) -> str:
    """The text a full checkpoint would hold (key order included)."""
    return json.dumps(value, separators=(",", ":"))


def _edit(value: Any, rng: random.Random, depth: int = 0, in_list: bool = False) -> Any:
    """A copy of ``value`` with a few random changes at any depth (states are fresh objects).
    Inside lists no number turns into an equal one of another type (``1`` → ``True``): lists
    compare by ``==`` (see :mod:`harness.store._delta`)."""
    if isinstance(value, dict):
        out = dict(value)
        for _ in range(rng.randint(0, 3)):
            roll = rng.random()
            if roll < 0.25 and out:
                del out[rng.choice(list(out))]
            elif roll < 0.5:
                fresh = str(rng.random()) if rng.random() < 0.5 else None
                out[fresh or rng.choice(["a", "b", "c", 4, "d"])] = 1
            elif out:
                key = rng.choice(list(out))
                out[key] = _edit(out[key], rng, depth + 1)
        if rng.random() < 0.05 and len(out) > 1:  # reorder the keys
            out = dict(reversed(list(out.items())))
        return out
    if isinstance(value, list):
        out = list(value)
        roll = rng.random()
        if roll < 0.3:  # append
            out += [rng.randint(0, 9) for _ in range(rng.randint(0, 4))]
        elif roll < 0.45 and out:  # a queue drops its oldest, takes a newest
            del out[: rng.randint(1, len(out))]
            out.append([rng.random(), "q"])
        elif roll < 0.6:  # insert in the middle
            out.insert(rng.randint(0, len(out)), {"k": [1, 2]})
        elif roll < 0.7 and out:  # remove from the middle
            del out[rng.randrange(len(out))]
        elif roll < 0.8 and out:
            out.reverse()
        elif out:
            i = rng.randrange(len(out))
            out[i] = _edit(out[i], rng, depth + 1, in_list=True)
        return out
    if in_list:
        return rng.choice([value, rng.random(), "s", None, ["x"], {"k": 1}])
    return rng.choice([value, rng.random(), rng.randint(0, 3), 1.0, "s", None, True, [1], {"k": 1}])


def _start() -> dict[str, Any]:
    return {
        "members": [f"p{i}" for i in range(200)],
        "grid": {f"{i}-{j}": f"p{i * 10 + j}" for i in range(10) for j in range(10)},
        "islands": [[f"p{i}" for i in range(k, 200, 5)] for k in range(5)],
        "queue": [[f"p{i}", i / 7] for i in range(100)],
        "rng": [3, list(range(20)), None],
        "n": 1,
        1: "int key",
    }


@pytest.mark.parametrize("seed", range(8))
def test_applying_each_delta_gives_the_new_state_exactly(seed: int) -> None:
    rng = random.Random(seed)
    state = _start()
    stored = json.loads(_json(state))
    for _ in range(400):
        new = _edit(state, rng)
        delta = diff(state, new)
        stored = apply(stored, json.loads(_json(delta)))
        assert _json(stored) == _json(new)
        state = new


def test_an_unchanged_state_has_no_delta_and_small_changes_small_ones() -> None:
    state = _start()
    assert diff(state, _start()) is None
    grown = {**state, "members": [*state["members"], "p200"]}
    assert len(_json(diff(state, grown))) < 60
    queue = [*state["queue"][1:], ["p999", 1.0]]
    assert len(_json(diff(state, {**state, "queue": queue}))) < 80
    grid = {**state["grid"], "3-4": "p999"}
    assert len(_json(diff(state, {**state, "grid": grid}))) < 80


def test_a_dict_value_that_changes_only_its_type_is_written() -> None:
    for before, after in [(1, True), (1, 1.0), (0.0, False), (True, 1)]:
        node = diff({"a": {"b": before}}, {"a": {"b": after}})
        assert node is not None
        stored = apply(json.loads(_json({"a": {"b": before}})), json.loads(_json(node)))
        assert _json(stored) == _json({"a": {"b": after}})


def _deltas(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM checkpoint_deltas").fetchone()[0])


def test_the_store_writes_deltas_then_a_new_base_and_reads_back_every_state(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.sqlite"
    store = SQLiteStore(path)
    store.create_run(run_record())
    rng = random.Random(1)
    state = _start()
    counts = []
    for i in range(1, 300):
        state = _edit(state, rng)
        store.commit_iteration(commit("r1", i, checkpoint=state))
        counts.append(_deltas(path))
        found = store.checkpoint("r1")
        assert found is not None and found[0] == i
        assert _json(found[1]) == _json(state)
    assert counts[0] == 0  # the first commit writes the base
    assert max(counts) > 10  # then deltas
    assert any(b < a for a, b in zip(counts, counts[1:], strict=False))  # and a new base
    store.close()
    reader = SQLiteReader(path)  # another process reads the same
    found = reader.checkpoint("r1")
    assert found is not None and _json(found[1]) == _json(state)
    reader.close()


def test_a_new_writer_starts_its_chain_with_a_base(tmp_path: Path) -> None:
    """A resumed run's store connection knows no earlier state: its first commit is a base,
    and the chain it found is not applied on top of it."""
    path = tmp_path / "s.sqlite"
    first = SQLiteStore(path)
    first.create_run(run_record())
    state = _start()
    for i in range(1, 6):
        state = {**state, "members": [*state["members"], f"n{i}"]}
        first.commit_iteration(commit("r1", i, checkpoint=state))
    assert _deltas(path) == 4
    first.close()
    second = SQLiteStore(path)
    state = {**state, "n": 2}
    second.commit_iteration(commit("r1", 6, checkpoint=state))
    assert _deltas(path) == 0
    state = {**state, "n": 3}
    second.commit_iteration(commit("r1", 7, checkpoint=state))
    assert _deltas(path) == 1
    found = second.checkpoint("r1")
    assert found is not None and found[0] == 7 and _json(found[1]) == _json(state)
    second.close()


def test_a_writer_that_fences_a_run_again_starts_a_new_chain(tmp_path: Path) -> None:
    """A long-lived store (the hub's) wrote a run; another connection resumed it and wrote its
    own base and deltas; when the first takes the run up again (the owner's fence: every
    execution sets it) it writes a base, not a delta against the state it knew, which the
    checkpoint would read on top of the other's chain."""
    path = tmp_path / "s.sqlite"
    hub = SQLiteStore(path)
    hub.create_run(run_record())
    state = _start()
    for i in range(1, 4):
        state = {**state, "members": [*state["members"], f"h{i}"]}
        hub.commit_iteration(commit("r1", i, checkpoint=state))
    other = SQLiteStore(path)
    other.update_run("r1", owner="other")  # (as its claim would)
    other.leases.fence("r1", "other")
    for i in range(4, 7):
        state = {**state, "members": [*state["members"][2:], f"o{i}"], "n": i}
        other.commit_iteration(commit("r1", i, checkpoint=state))
    other.leases.fence("r1", None)
    other.close()
    hub.update_run("r1", owner="hub")  # the hub resumes it
    hub.leases.fence("r1", "hub")
    state = {**state, "members": [*state["members"], "h7"]}
    hub.commit_iteration(commit("r1", 7, checkpoint=state))
    assert _deltas(path) == 0  # a base
    state = {**state, "n": 8}
    hub.commit_iteration(commit("r1", 8, checkpoint=state))
    hub.close()
    reader = SQLiteReader(path)
    found = reader.checkpoint("r1")
    assert found is not None and found[0] == 8 and _json(found[1]) == _json(state)
    reader.close()


def test_a_failed_commit_leaves_the_chain_as_it_was(tmp_path: Path) -> None:
    """A commit the store refuses (it would overwrite a program) writes no delta, and the next
    delta is taken against the last state that was committed."""
    store = SQLiteStore(tmp_path / "s.sqlite")
    store.create_run(run_record())
    state = _start()
    store.commit_iteration(commit("r1", 1, [program("p1", 1, 1.0)], checkpoint=state))
    refused = commit("r1", 2, [program("p1", 2, 1.0)], checkpoint={**state, "n": 6})
    with pytest.raises(StoreError, match="overwrite a stored program"):
        store.commit_iteration(refused)
    latest = {**state, "n": 6, "members": state["members"][1:]}  # "n" as the refused one had
    store.commit_iteration(commit("r1", 3, checkpoint=latest))
    found = store.checkpoint("r1")
    assert found is not None and _json(found[1]) == _json(latest)
    store.close()


#: EvoX runs its strategies in subprocesses (seconds): slow tier, as in tests/conformance.
SCAFFOLDS = [
    pytest.param(n, marks=pytest.mark.slow) if n == "evox" else n for n in list_scaffolds()
]


@pytest.mark.parametrize("name", SCAFFOLDS)
def test_every_scaffolds_checkpoint_reads_back_its_full_state(name: str, tmp_path: Path) -> None:
    """After every iteration the store's checkpoint (base + deltas) equals the scaffold's state
    serialised whole: no block hands out state it changes later."""
    built = build(name, tmp_path / "s.sqlite", iterations=12)
    seen: list[int] = []

    def check(progress: Progress) -> None:
        found = built.store.checkpoint("conf")
        assert found is not None
        assert _json(found[1]["scaffold"]) == _json(json.loads(_json(built.scaffold.state_dict())))
        seen.append(progress.iterations_done)

    built.controller.on_progress = check
    run(built)
    assert seen[-1] == 12
    assert _deltas(tmp_path / "s.sqlite") > 0


def test_a_long_list_of_chunks_changed_in_two_far_apart_is_written_as_those_two() -> None:
    # A roster of 200 chunks (past the short-list limit): an id leaves chunk 3, one joins the
    # last.  Only the two chunks' changes are written, not the whole list of ids.
    chunks = [[f"p{i}" for i in range(k * 64, (k + 1) * 64)] for k in range(200)]
    new = list(chunks)
    new[3] = [pid for pid in chunks[3] if pid != "p200"]
    new[199] = [*chunks[199], "p99999"]
    delta = diff(chunks, new)
    assert delta is not None and [op[1] for op in delta] == [[3], [199]]
    assert len(_json(delta)) < 200
    stored = apply(json.loads(_json(chunks)), json.loads(_json(delta)))
    assert stored == new
    # A long list of scalars changed far apart is still spliced or written whole, as before.
    ids = [f"p{i}" for i in range(1000)]
    changed = [*ids[:10], "x", *ids[11:990], "y", *ids[991:]]
    delta = diff(ids, changed)
    assert delta is not None and len(delta) == 1 and delta[0][0] in {"p", "="}
    assert apply(json.loads(_json(ids)), json.loads(_json(delta))) == changed


def test_a_delta_is_a_flat_list_of_operations_with_paths() -> None:
    """One operation per change, each naming its path from the root (dict keys as JSON
    writes them), instead of a nested node per container on the way."""
    state = _start()
    new = {
        **state,
        "members": [*state["members"], "p200"],
        "grid": {**state["grid"], "3-4": "p999"},
        "rng": [3, [*range(19), 99], None],
        1: "changed",
        "fresh": [1],
    }
    del new["n"]
    assert diff(state, new) == [
        ["l", ["members"], 0, ["p200"]],
        ["=", ["grid", "3-4"], "p999"],
        ["=", ["rng", 1, 19], 99],
        ["=", ["1"], "changed"],
        ["=", ["fresh"], [1]],
        ["x", [], ["n"]],
    ]
    assert not any(isinstance(item, dict) for op in diff(state, new) or [] for item in op[:2])
    stored = apply(json.loads(_json(state)), json.loads(_json(diff(state, new))))
    assert _json(stored) == _json(new)
    assert diff(1, 2) == [["=", [], 2]] and apply(1, [["=", [], 2]]) == 2
    for key, text in ((None, "null"), (True, "true"), (2.5, "2.5"), (-3, "-3")):
        assert diff({key: 1}, {key: 2}) == [["=", [text], 2]]


#: A v7 delta (nested nodes) of ``_start()`` and the state it makes: still read.
V7_DELTA = {
    "~": "d",
    "s": {
        "members": {"~": "l", "d": 0, "t": ["p200"]},
        "islands": {"~": "i", "s": {"2": {"~": "p", "p": 1, "q": 30, "v": ["z"]}}},
        "rng": {"~": "i", "s": {"1": {"~": "i", "s": {"19": {"~": "=", "v": 99}}}}},
        "new": {"~": "=", "v": {"k": 1}},
    },
    "x": {"n": 0},
}


def test_a_delta_written_before_schema_v8_still_applies() -> None:
    state = json.loads(_json(_start()))
    expected = json.loads(_json(_start()))
    expected["members"].append("p200")
    expected["islands"][2][1:-30] = ["z"]
    expected["rng"][1][19] = 99
    expected["new"] = {"k": 1}
    del expected["n"]
    assert _json(apply(state, json.loads(json.dumps(V7_DELTA)))) == _json(expected)
