"""The MAP-Elites population's kept indexes equal a full recompute.

``nearby_cells`` (cell → owner for the nearby-inspiration step), ``island_ranked`` (an
island's members by a key, as a stable descending sort), the cap's eviction order, each
island's codes (migration's duplicate check) and fitness values (the weighted tier), and the
checkpoint's chunked lists of members, their islands and each island's members are kept as
programs come and go instead of recomputed per selection, admission or checkpoint.  After every
admission of a random stream (small caps, so programs are displaced and evicted; values that
widen the feature scaling; a migration every few admissions) they must equal what the reference
computes from scratch, and a population restored from a checkpoint (also one written before the
chunks) must go on exactly as the uninterrupted one.
"""

from __future__ import annotations

import copy
import json
import math
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from harness.components.population import ChunkedLog
from harness.core.records import Program
from scaffolds.openevolve import population as population_module
from scaffolds.openevolve.features import FeatureScaler, fast_diversity
from scaffolds.openevolve.population import MapElitesIslandsConfig, MapElitesIslandsPopulation
from scaffolds.openevolve.prompt import _program_rank
from scaffolds.openevolve.roster import Roster
from tests.fakes import RecordingStep

#: The state after ``_admit`` of ``_stream("complexity_diversity", seed=3, steps=OLD_STEPS)``
#: as the population wrote it before its lists were chunked (commit c92bbd2; diversity cache of
#: 40, as here).
FLAT_STATE = Path(__file__).parent / "fixtures" / "flat_state.json"
OLD_STEPS = 150

SCENARIOS: dict[str, dict[str, Any]] = {
    # The card's dimensions: settled once the reference set is full and the cache has turned.
    "complexity_diversity": {"population_size": 300, "num_islands": 3, "migration_rate": 0.2},
    # A metric and the score: settled from the start.
    "metric_score": {
        "population_size": 200,
        "num_islands": 2,
        "feature_dimensions": ["speed", "score"],
        "feature_bins": {"speed": 6, "score": 4},
    },
}


def _program(i: int, rng: random.Random) -> Program:
    score = rng.choice([rng.random(), rng.random(), 0.5, float(rng.randint(0, 3))])
    lines = "\n".join(f"v{j} = {rng.randint(0, 99)}" for j in range(rng.randint(1, 12)))
    return Program(
        id=f"p{i}",
        code=f"# {chr(97 + rng.randint(0, 25)) * rng.randint(1, 30)}\n{lines}\n",
        iteration=i,
        metrics={"combined_score": score, "speed": rng.uniform(-1, 1) * (1 + i / 50)},
        score=score,
        metadata={"island": rng.randint(0, 4)},
    )


def _full_cells(pop: MapElitesIslandsPopulation, island: int) -> dict[str, str]:
    return _reference_loop(pop, island)[0]


def _reference_loop(
    pop: MapElitesIslandsPopulation, island: int
) -> tuple[dict[str, str], MapElitesIslandsPopulation]:
    """The reference's loop, on a copy (its side effects stay there: the scaling it widens,
    the diversity cache it fills, the reference set and the RNG drawing it); the copy after."""
    other = copy.copy(pop)
    other.scaler = copy.deepcopy(pop.scaler)
    kept = ("_diversity", "_frozen", "_programs", "_cell_index", "_rankings", "_settled")
    for name in (*kept, "_coords"):
        setattr(other, name, dict(getattr(pop, name)))
    other._stale = set(pop._stale)  # noqa: SLF001
    other._cache_pairs = list(pop._cache_pairs)  # noqa: SLF001
    other._reference = list(pop._reference)  # noqa: SLF001
    other._reference_code = list(pop._reference_code)  # noqa: SLF001
    other.rng = copy.deepcopy(pop.rng)
    cells: dict[str, str] = {}
    for pid in list(other.islands[island]):
        program = other.get(pid)
        if program is not None:
            cells[other.cell_key(other.coordinates(program))] = pid
    return cells, other


def _check(pop: MapElitesIslandsPopulation) -> int:
    """Every kept index against a recompute; how many kept coordinates were checked."""
    for island in range(len(pop.islands)):
        ids = list(pop.islands[island])
        cells = _full_cells(pop, island)  # before: the reference's loop widens the scaling
        assert dict(pop.nearby_cells(island, ids)) == cells
        members = pop.island_members(island)
        assert pop.island_size(island) == len(members)
        for key in (pop.fitness, _program_rank):
            for n in (1, 3, len(members) + 1):
                expected = sorted(members, key=key, reverse=True)[:n]
                assert [p.id for p in pop.island_ranked(island, n, key)] == [p.id for p in expected]
    owners = {pid for grid in pop.cells for pid in grid.values()}
    protected = {pop.best_id, next(iter(pop.islands[0]), None)}
    candidates = [p for p in pop.programs() if p.id not in protected]
    free = sorted((p for p in candidates if p.id not in owners), key=pop.fitness)
    owning = sorted((p for p in candidates if p.id in owners), key=pop.fitness)
    for excess in (1, 2, len(free) + 2):  # the cap's eviction order
        expected = [p.id for p in (free + owning)[:excess]]
        assert pop._worst(excess, protected, owners) == expected  # noqa: SLF001
    state = pop.state_dict()
    cache = pop._diversity.values()  # noqa: SLF001
    assert state["diversity"] == [[pid, value] for value, pid in cache]
    members = [p.id for p in pop.programs()]
    assert ChunkedLog.items(state["member_chunks"]) == members == list(pop.member_ids())
    assert ChunkedLog.items(state["island_of_chunks"]) == [pop.island_of(pid) for pid in members]
    assert state["cells"] == [dict(grid) for grid in pop.cells]
    for island, roster in enumerate(pop.islands):
        ids = ChunkedLog.items(state["island_chunks"][island])
        assert ids == list(roster) == [roster[i] for i in range(len(roster))]
        assert [roster.index(pid) for pid in ids] == list(range(len(ids)))
        assert all(pop.island_of(pid) == island for pid in ids)
        programs = pop.island_members(island)
        assert [p.id for p in programs] == ids
        weights = [max(pop.fitness(p), 0.001) for p in programs]  # the weighted tier's
        assert _same_floats(roster.values(), weights)
        assert pop._codes[island] == Counter(p.code for p in programs)  # noqa: SLF001
    archived = [pop.fitness(pop.lookup(pid)) for pid in pop.archive]
    assert _same_floats(list(pop.archive.values()), archived)
    members = [p.id for p in pop.archive_members()]
    for island in range(len(pop.islands)):  # kept until the archive or its members change
        here = [pid for pid in members if pop.island_of(pid) == island]
        assert pop.archive_ids(island) == (members, here)
    _, other = _reference_loop(pop, 0)
    other._coords = {}  # noqa: SLF001
    checked = 0
    for program in pop.programs():  # kept coordinates: what computing them again gives
        kept = pop._coords.get(program.id)  # noqa: SLF001
        if kept is not None and kept[0] == pop.scaler.version:
            assert other.coordinates(program) == kept[1]
            assert other.scaler.version == pop.scaler.version  # observing them widened nothing
            checked += 1
    if pop._settled_values() and len(pop):  # noqa: SLF001 - as a selection asks for a parent's
        pop.coordinates(pop.programs()[-1])
    return checked
    for program in pop.programs()[:3]:  # the diversity sum with the reference counted once
        scores = [fast_diversity(program.code, r) for r in pop._reference_code if r != program.code]  # noqa: SLF001
        expected = sum(scores) / len(scores) if scores else 0.0
        assert pop._against_reference(program.code) == expected  # noqa: SLF001
    again = pop.state_dict()  # nothing changed: every chunk and grid handed out again
    for key in ("member_chunks", "island_of_chunks", "cells"):
        assert all(a is b for a, b in zip(again[key], state[key], strict=True))
    for a, b in zip(again["island_chunks"], state["island_chunks"], strict=True):
        assert all(x is y for x, y in zip(a, b, strict=True))


def _same_floats(a: list[float], b: list[float]) -> bool:
    pairs = zip(a, b, strict=False)
    return len(a) == len(b) and all(x == y or (math.isnan(x) and math.isnan(y)) for x, y in pairs)


def _admit(pop: MapElitesIslandsPopulation, program: Program) -> None:
    """Admit ``program``; every 9th program a migration follows (copies named after it)."""
    pop.add(program)
    if program.iteration % 9 == 8:
        pop._migrate(RecordingStep(program.iteration))  # noqa: SLF001


def _stream(name: str, seed: int, steps: int) -> tuple[MapElitesIslandsPopulation, list[Program]]:
    config = MapElitesIslandsConfig(**SCENARIOS[name], diversity_reference_size=5)
    return MapElitesIslandsPopulation(config, random.Random(seed)), [
        _program(i, random.Random(seed * 1000 + i)) for i in range(steps)
    ]


@pytest.fixture(autouse=True)
def small_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """A diversity cache of 40 (the reference's 1,000 turns over only past 1,000 programs)."""
    monkeypatch.setattr(population_module, "DIVERSITY_CACHE_SIZE", 40)


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of 8 ids (of 1,024): many chunks, emptied ones dropped, sparse ones packed."""
    monkeypatch.setattr(Roster, "CHUNK", 8)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_kept_indexes_equal_a_full_recompute_after_every_admission(name: str) -> None:
    pop, programs = _stream(name, seed=1, steps=400)
    settled_seen = False
    coordinates_checked = 0
    for program in programs:
        _admit(pop, program)
        coordinates_checked += _check(pop)
        settled_seen = settled_seen or pop._settled_values()  # noqa: SLF001
    migrants = sum(bool(p.metadata.get("migrant")) for p in pop.programs())
    assert migrants and len(pop) < len(programs) + migrants  # migrations and evictions happened
    assert settled_seen  # the kept indexes were used, not only rebuilt
    assert coordinates_checked  # and kept coordinates were there to check


def test_a_restored_population_goes_on_as_the_uninterrupted_one() -> None:
    whole, programs = _stream("complexity_diversity", seed=2, steps=300)
    for program in programs[:200]:
        _admit(whole, program)
        _check(whole)
    state = json.loads(json.dumps(whole.state_dict()))  # as the store gives it back
    known = {**whole._known}  # noqa: SLF001 - the store's programs: migrants' copies too
    restored, _ = _stream("complexity_diversity", seed=99, steps=0)
    restored.load_state_dict(state, known)
    _check(restored)
    for program in programs[200:]:
        _admit(whole, program)
        _admit(restored, program)
        _check(whole)
        _check(restored)
        assert restored.state_dict() == whole.state_dict()


def test_a_checkpoint_written_before_the_chunks_loads_and_goes_on_the_same() -> None:
    """The fixture is the earlier population's state after ``OLD_STEPS`` admissions (and its
    migrations): today's population admits the same stream to the same state (its diversity
    cache aside), and one restored from the fixture goes on as it does."""
    whole, programs = _stream("complexity_diversity", seed=3, steps=OLD_STEPS + 60)
    for program in programs[:OLD_STEPS]:
        _admit(whole, program)
    flat = json.loads(FLAT_STATE.read_text())
    assert "members" in flat and "member_chunks" not in flat  # the earlier shape
    assert _cacheless(_flat_state(whole.state_dict())) == _cacheless(flat)
    restored, _ = _stream("complexity_diversity", seed=99, steps=0)
    restored.load_state_dict(flat, {**whole._known})  # noqa: SLF001
    _check(restored)
    for program in programs[OLD_STEPS:]:
        _admit(whole, program)
        _admit(restored, program)
        _check(restored)  # its chunks are packed afresh: the same lists in other chunks
        now = _flat_state(whole.state_dict())
        assert _cacheless(_flat_state(restored.state_dict())) == _cacheless(now)


def test_a_checkpoint_with_larger_chunks_loads_and_goes_on_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A checkpoint written with larger chunks (main's were of 1,024 ids, now 128; here 64
    against 8) does not fit today's layout: its rosters are packed afresh, the same ids in the
    same order, and the run goes on as the uninterrupted one with today's chunks."""
    monkeypatch.setattr(Roster, "CHUNK", 64)
    old, programs = _stream("complexity_diversity", seed=5, steps=300)
    for program in programs[:200]:
        _admit(old, program)
    state = json.loads(json.dumps(old.state_dict()))
    assert max(len(chunk) for chunk in state["member_chunks"]) > 8  # the larger chunks
    known = {**old._known}  # noqa: SLF001
    monkeypatch.setattr(Roster, "CHUNK", 8)
    whole, _ = _stream("complexity_diversity", seed=5, steps=0)
    for program in programs[:200]:
        _admit(whole, program)
    restored, _ = _stream("complexity_diversity", seed=99, steps=0)
    restored.load_state_dict(state, known)
    _check(restored)
    assert _flat_state(restored.state_dict()) == _flat_state(whole.state_dict())
    for program in programs[200:]:
        _admit(whole, program)
        _admit(restored, program)
        _check(restored)
        assert all(len(chunk) <= 8 for chunk in restored.state_dict()["member_chunks"])
        assert _flat_state(restored.state_dict()) == _flat_state(whole.state_dict())


def _cacheless(state: dict[str, Any]) -> dict[str, Any]:
    """``state`` without the diversity cache: once values are settled the population no longer
    refills it (it decides no value), where the earlier one did."""
    return {k: v for k, v in state.items() if k not in ("diversity", "stale")}


def _flat_state(state: dict[str, Any]) -> dict[str, Any]:
    """``state`` in the earlier shape (flat lists, no layouts), as JSON gives it back."""
    flat = {k: v for k, v in state.items() if not k.endswith(("_chunks", "_layout", "_layouts"))}
    flat["members"] = ChunkedLog.items(state["member_chunks"])
    flat["island_of"] = ChunkedLog.items(state["island_of_chunks"])
    flat["islands"] = [ChunkedLog.items(chunks) for chunks in state["island_chunks"]]
    return json.loads(json.dumps(flat))


def test_a_rebuild_whose_values_would_widen_the_scaling_widens_it_as_the_reference_does() -> None:
    """The kept values are binned directly only while they all lie within the scaling; one
    outside it (here: a scaling narrowed by hand) takes the reference's loop, which widens the
    scaling member by member as it goes."""
    pop, programs = _stream("complexity_diversity", seed=4, steps=250)
    for program in programs:
        pop.add(program)
    assert pop._settled_values()  # noqa: SLF001
    for island in range(len(pop.islands)):
        for dim, (low, high) in list(pop.scaler.stats.items()):
            pop.scaler.stats[dim] = [low + (high - low) * 0.4, low + (high - low) * 0.6]
        pop.scaler.version += 1
        ids = list(pop.islands[island])
        assert pop._cells_at_rest(ids) is None  # noqa: SLF001
        expected, after = _reference_loop(pop, island)
        assert dict(pop.nearby_cells(island, ids)) == expected
        assert pop.scaler.stats == after.scaler.stats
        assert pop._cells_at_rest(ids) is not None  # noqa: SLF001 - now within the scaling
        assert dict(pop.nearby_cells(island, ids)) == _full_cells(pop, island)


def test_bins_within_the_scaling_are_the_bins_observing_them_gives() -> None:
    rng = random.Random(8)
    for trial in range(300):
        scaler = FeatureScaler()
        low = rng.uniform(-5, 5)
        high = low if trial % 10 == 0 else low + rng.choice([1e-9, 0.3, 7.0, 1e6])
        scaler.observe("d", low)
        scaler.observe("d", high)
        inside = [low, high, *(rng.uniform(low, high) for _ in range(20)), None]
        bins = rng.randint(1, 12)
        version = scaler.version
        expected = [0 if v is None else scaler.bin("d", v, bins) for v in inside]
        assert scaler.version == version  # observing them changed nothing
        assert scaler.bins_within("d", inside, bins) == expected
        for outside in (low - 1e-3, high + 1e-3, float("nan")):
            assert scaler.bins_within("d", [*inside, outside], bins) is None
    assert FeatureScaler().bins_within("d", [None, None], 4) == [0, 0]
    assert FeatureScaler().bins_within("d", [0.5], 4) is None  # nothing seen yet


def test_diversity_against_the_reference_equals_fast_diversity_for_any_text() -> None:
    rng = random.Random(9)
    alphabet = "ab \n=+()xé€😀\t"
    pop, _ = _stream("complexity_diversity", seed=5, steps=0)
    codes = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(60)]
    pop._reference_code = codes[:20]  # noqa: SLF001
    for code in [*codes, codes[3]]:
        scores = [fast_diversity(code, ref) for ref in codes[:20] if ref != code]
        expected = sum(scores) / len(scores) if scores else 0.0
        assert pop._against_reference(code) == expected  # noqa: SLF001
