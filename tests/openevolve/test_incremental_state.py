"""The MAP-Elites population's kept indexes equal a full recompute.

``nearby_cells`` (cell → owner for the nearby-inspiration step), ``island_ranked`` (an
island's members by a key, as a stable descending sort) and the cap's eviction order are kept
as programs come and go instead of recomputed per selection or admission.  After every
admission of a random stream (small caps, so programs are displaced and evicted; values that
widen the feature scaling) they must equal what the reference computes from scratch, and a
population restored from a checkpoint must go on exactly as the uninterrupted one.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from harness.core.records import Program
from scaffolds.openevolve import population as population_module
from scaffolds.openevolve.population import MapElitesIslandsConfig, MapElitesIslandsPopulation
from scaffolds.openevolve.prompt import _program_rank

SCENARIOS: dict[str, dict[str, Any]] = {
    # The card's dimensions: settled once the reference set is full and the cache has turned.
    "complexity_diversity": {"population_size": 300, "num_islands": 3},
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
    """The reference's loop, on a copy (its side effects stay there: the scaling it widens,
    the diversity cache it fills, the reference set and the RNG drawing it)."""
    other = copy.copy(pop)
    other.scaler = copy.deepcopy(pop.scaler)
    for name in ("_diversity", "_frozen", "_programs", "_cell_index", "_rankings", "_settled"):
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
    return cells


def _check(pop: MapElitesIslandsPopulation) -> None:
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
    assert state["island_of"] == [pop.island_of(pid) for pid in state["members"]]


def _stream(name: str, seed: int, steps: int) -> tuple[MapElitesIslandsPopulation, list[Program]]:
    config = MapElitesIslandsConfig(**SCENARIOS[name], diversity_reference_size=5)
    return MapElitesIslandsPopulation(config, random.Random(seed)), [
        _program(i, random.Random(seed * 1000 + i)) for i in range(steps)
    ]


@pytest.fixture(autouse=True)
def small_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """A diversity cache of 40 (the reference's 1,000 turns over only past 1,000 programs)."""
    monkeypatch.setattr(population_module, "DIVERSITY_CACHE_SIZE", 40)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_kept_indexes_equal_a_full_recompute_after_every_admission(name: str) -> None:
    pop, programs = _stream(name, seed=1, steps=400)
    settled_seen = False
    for program in programs:
        pop.add(program)
        _check(pop)
        settled_seen = settled_seen or pop._settled_values()  # noqa: SLF001
    assert len(pop) < len(programs)  # evictions happened
    assert settled_seen  # the kept indexes were used, not only rebuilt


def test_a_restored_population_goes_on_as_the_uninterrupted_one() -> None:
    whole, programs = _stream("complexity_diversity", seed=2, steps=300)
    for program in programs[:200]:
        whole.add(program)
        _check(whole)
    state = copy.deepcopy(whole.state_dict())
    known = {p.id: p for p in programs[:200]}
    restored, _ = _stream("complexity_diversity", seed=99, steps=0)
    restored.load_state_dict(state, known)
    for program in programs[200:]:
        whole.add(program)
        restored.add(program)
        _check(whole)
        _check(restored)
        assert restored.state_dict() == whole.state_dict()
