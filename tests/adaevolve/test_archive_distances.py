"""The archive's kept member distances against a recompute: every admission, eviction, score,
novelty, crowding decision and context draw as with the codes compared afresh."""

from __future__ import annotations

import random

from harness.core.records import Program
from scaffolds.adaevolve.archive import (
    DISTANCE_CACHE_LIMIT,
    ArchiveWeights,
    IslandArchive,
    _signature,
    archive_fitness,
    code_distance,
    proxy_fitness,
)
from tests.adaevolve.helpers import program

WORDS = ["alpha", "beta", "gamma", "np", "math", "sum", "loop", "xs", "total", "best", "42", "7"]


def _code(rng: random.Random) -> str:
    lines = []
    if rng.random() < 0.5:
        lines.append(f"import {rng.choice(['math', 'numpy as np', 'random'])}")
    for _ in range(rng.randint(1, 6)):
        kind = rng.random()
        name = rng.choice(WORDS[:9])
        if kind < 0.3:
            lines.append(f"def {name}(n):\n    return n * {rng.randint(0, 99)}")
        elif kind < 0.5:
            lines.append(f"for {name} in range({rng.choice(WORDS)}):\n    pass")
        elif kind < 0.6:
            lines.append(f"class {name.title()}:\n    pass")
        else:
            call = f"{rng.choice(WORDS)}.{rng.choice(WORDS[:9])}({rng.random():.2f})"
            lines.append(f"{name} = {call}")
    return "\n".join(lines) + "\n"


def _recomputing(capacity: int, k: int, weights: ArchiveWeights) -> IslandArchive:
    archive = IslandArchive(capacity, k, weights)
    archive._dist = None  # noqa: SLF001 - the archive without its kept distances
    return archive


def _check_kept_distances(archive: IslandArchive) -> None:
    kept = archive._dist  # noqa: SLF001
    assert kept is not None
    members = archive.members()
    assert list(kept) == [p.id for p in members]
    for a in members:
        assert set(kept[a.id]) == {p.id for p in members if p.id != a.id}
        for b in members:
            if a.id != b.id:
                assert kept[a.id][b.id] == code_distance(a.code, b.code)


def _scores_by_definition(
    archive: IslandArchive,
) -> tuple[dict[str, float], dict[str, float]]:
    """(novelty, elite score) per member from the codes, as the module's docstring defines
    them: novelty the mean of the k smallest distances to the others, elite the weighted
    fitness and novelty percentiles (ties: members strictly below)."""
    members = archive.members()
    n = len(members)
    novelty = {}
    for p in members:
        near = sorted(code_distance(p.code, o.code) for o in members if o.id != p.id)
        near = near[: archive.k_neighbors]
        novelty[p.id] = sum(near) / len(near) if near else 1.0
    ranked = sorted(members, key=archive_fitness, reverse=True)
    w = archive.weights
    elite = {}
    for i, p in enumerate(ranked):
        below = sum(1 for v in novelty.values() if v < novelty[p.id])
        elite[p.id] = (w.fitness_weight + w.pareto_weight) * (
            1.0 - i / max(n - 1, 1)
        ) + w.novelty_weight * (below / n)
    return novelty, elite


def _protected_by_definition(archive: IslandArchive) -> set[str]:
    elite = archive.elite_scores()
    count = max(1, int(len(elite) * archive.weights.elite_ratio))
    protected = set(sorted(elite, key=lambda pid: elite[pid], reverse=True)[:count])
    members = {p.id: p for p in archive.members()}
    protected.add(max(members, key=lambda pid: archive_fitness(members[pid])))
    return protected


def _newcomer_by_definition(archive: IslandArchive, newcomer: Program) -> float:
    members = archive.members()
    n = len(members)
    w = archive.weights
    if n == 0:
        return w.fitness_weight + w.novelty_weight + w.pareto_weight
    better = sum(1 for p in members if archive_fitness(p) > archive_fitness(newcomer))
    if n == 1:
        fitness_pct = 1.0 if better == 0 else 0.0
    else:
        fitness_pct = min(1.0, max(0.0, 1 - better / (n - 1)))
    near = sorted(code_distance(newcomer.code, o.code) for o in members if o.id != newcomer.id)
    near = near[: archive.k_neighbors]
    novelty = sum(near) / len(near) if near else 1.0
    existing = archive.novelty_scores()
    novelty_pct = sum(1 for p in members if existing[p.id] < novelty) / n
    return (w.fitness_weight + w.pareto_weight) * fitness_pct + w.novelty_weight * novelty_pct


def _distance_by_definition(a: str, b: str) -> float:
    if a == b:
        return 0.0
    (tokens_a, features_a), (tokens_b, features_b) = _signature(a), _signature(b)

    def jaccard(x: frozenset[str], y: frozenset[str]) -> float:
        union = len(x | y)
        return 0.0 if union == 0 else 1.0 - len(x & y) / union

    return (
        0.5 * jaccard(tokens_a, tokens_b)
        + 0.3 * jaccard(features_a, features_b)
        + 0.2 * abs(len(a) - len(b)) / max(len(a), len(b), 1)
    )


def test_code_distance_is_symmetric_to_the_bit_and_as_defined() -> None:
    rng = random.Random(5)
    codes = [_code(rng) for _ in range(60)] + ["", "x", "# 1"]
    for a in codes:
        for b in codes:
            assert code_distance(a, b) == code_distance(b, a) == _distance_by_definition(a, b)


def test_kept_distances_decide_as_a_recompute_would() -> None:
    for seed in range(8):
        rng = random.Random(seed)
        weights = ArchiveWeights(
            fitness_weight=rng.choice([1.0, 0.3]),
            novelty_weight=rng.choice([0.0, 0.3, 0.5]),
            pareto_weight=0.4,
            elite_ratio=rng.choice([0.05, 0.2, 0.3]),
        )
        capacity, k = rng.choice([(5, 3), (20, 5), (8, 10)])
        kept = IslandArchive(capacity, k, weights)
        fresh = _recomputing(capacity, k, weights)
        # few codes: members with equal codes (distance 0) and equal novelties
        codes = [_code(rng) for _ in range(rng.choice([4, 25]))]
        for i in range(120):
            score = round(rng.random(), 2)  # ties in fitness
            parent = rng.choice([None, *(p.id for p in kept.members())])
            child = program(f"c{i}", rng.choice(codes), score, parent=parent)
            assert kept.newcomer_elite_score(child) == fresh.newcomer_elite_score(child)
            assert kept.newcomer_elite_score(child) == _newcomer_by_definition(kept, child)
            assert kept.add(child) == fresh.add(child)
            assert [p.id for p in kept.members()] == [p.id for p in fresh.members()]
            assert kept.elite_scores() == fresh.elite_scores()
            assert kept.novelty_scores() == fresh.novelty_scores()
            assert (kept.novelty_scores(), kept.elite_scores()) == _scores_by_definition(kept)
            assert kept.protected_ids() == fresh.protected_ids() == _protected_by_definition(kept)
            members = kept.members()
            assert kept.ranked() == sorted(members, key=archive_fitness, reverse=True)
            assert kept.ranked_by_proxy() == sorted(members, key=proxy_fitness, reverse=True)
            for member in kept.members():
                assert [p.id for p in kept.most_distant(member, 3)] == [
                    p.id for p in fresh.most_distant(member, 3)
                ]
            outsider = program("out", rng.choice(codes), 0.5)
            assert kept.most_distant(outsider, 2) == fresh.most_distant(outsider, 2)
            draw_a, draw_b = random.Random(i), random.Random(i)
            for mode in ("exploration", "exploitation", "balanced"):
                assert kept.sample_parent(mode, draw_a) is fresh.sample_parent(mode, draw_b)
            _check_kept_distances(kept)


def test_a_restored_archive_keeps_the_same_distances_and_scores() -> None:
    rng = random.Random(11)
    archive = IslandArchive(10, 5, ArchiveWeights(novelty_weight=0.3))
    programs = {}
    for i in range(60):
        child = program(f"c{i}", _code(rng), rng.random())
        programs[child.id] = child
        archive.add(child)
    restored = IslandArchive(10, 5, ArchiveWeights(novelty_weight=0.3))
    restored.load_state_dict(archive.state_dict(), programs)
    _check_kept_distances(restored)
    assert restored.elite_scores() == archive.elite_scores()
    assert restored.novelty_scores() == archive.novelty_scores()
    child = program("next", _code(rng), 0.9)
    assert restored.add(child) == archive.add(child)
    assert restored.elite_scores() == archive.elite_scores()


def test_an_archive_above_the_limit_compares_codes_afresh() -> None:
    rng = random.Random(3)
    big = IslandArchive(DISTANCE_CACHE_LIMIT + 1, 5, ArchiveWeights())
    assert big._dist is None  # noqa: SLF001
    for i in range(30):
        big.add(program(f"c{i}", _code(rng), rng.random()))
    assert len(big) == 30
    assert len(big.novelty_scores()) == 30
