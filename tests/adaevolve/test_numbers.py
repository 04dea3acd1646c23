"""AdaEvolve's numbers pinned from the reference's code (audit §3.1): intensity, the mode
split, UCB on a scripted history, crowding admission, spawning and migration timing."""

from __future__ import annotations

import math
import random

import pytest

from harness.core.records import IterationOutcome
from scaffolds.adaevolve.adaptive import AdaptiveState, IslandBandit
from scaffolds.adaevolve.archive import Admission, ArchiveWeights, IslandArchive
from scaffolds.adaevolve.policy import AdaEvolvePolicy
from scaffolds.adaevolve.population import PRESETS, AdaEvolveArchipelago
from tests.adaevolve.helpers import end, program, seed_run
from tests.fakes import select_now


def fresh_state() -> AdaptiveState:
    return AdaptiveState(decay=0.9, intensity_min=0.15, intensity_max=0.5)


def test_intensity_of_a_fresh_island_and_after_its_first_improvement() -> None:
    state = fresh_state()
    assert state.intensity() == pytest.approx(0.4999650035, abs=1e-10)
    state.record(0.5)
    assert state.signal == pytest.approx(0.1)
    assert state.intensity() == pytest.approx(0.4159114211, abs=1e-10)


def test_signal_moves_only_on_improvement_with_capped_normalised_gain() -> None:
    state = fresh_state()
    state.record(0.5)
    state.record(0.4)  # no improvement: counted, G unchanged
    assert (state.signal, state.evaluations, state.improvements) == (pytest.approx(0.1), 2, 1)
    state.record(0.6)  # δ = 0.1/0.5 = 0.2
    assert state.signal == pytest.approx(0.094)
    assert state.intensity() == pytest.approx(0.4178719967, abs=1e-9)
    capped = fresh_state()
    capped.record(0.5)
    capped.record(2.0)  # δ capped at 1
    assert capped.signal == pytest.approx(0.19)
    assert capped.intensity() == pytest.approx(0.3937512783, abs=1e-9)


def test_external_improvement_moves_best_and_signal_but_counts_nothing() -> None:
    state = fresh_state()
    state.receive(0.5)
    assert (state.signal, state.evaluations, state.improvements) == (pytest.approx(0.1), 0, 0)


def test_ucb_scores_on_the_audits_scripted_history() -> None:
    bandit = IslandBandit(decay=0.9)
    for _ in range(2):
        bandit.add_island(0.15, 0.5)
    bandit.record(0, 0.5)  # the seed, on island 0
    bandit.receive(1, 0.5)  # its copy on island 1
    for island, fitness in ((0, 0.5), (1, 0.5), (1, 0.6), (0, 0.5), (1, 0.5)):
        bandit.record(island, fitness)
    assert bandit.visits == [3, 3]
    assert bandit.decayed_visits == pytest.approx([2.71, 2.71])
    assert bandit.rewards == pytest.approx([0.81, 0.18])
    assert bandit.scores(5) == pytest.approx([1.388571, 1.156099], abs=1e-6)
    assert bandit.scores(15) == pytest.approx([1.654398, 1.421926], abs=1e-6)
    assert bandit.pick(5, random.Random(0)) == (0, "ucb")


def test_min_visits_rule_draws_even_for_a_single_candidate() -> None:
    bandit = IslandBandit(decay=0.9)
    for _ in range(2):
        bandit.add_island(0.15, 0.5)
    for _ in range(3):
        bandit.record(0, 0.5)
    rng, twin = random.Random(4), random.Random(4)
    assert bandit.pick(1, rng) == (1, "min_visits")
    twin.choice([1])
    assert rng.getstate() == twin.getstate()


CODES = [
    "import math\ndef area(r):\n    return math.pi * r * r\n",
    "def total(xs):\n    s = 0\n    for x in xs:\n        s += x\n    return s\n",
    "import numpy as np\ndef pack(n):\n    pts = np.zeros((n, 2))\n    return pts\n",
    "class Grid:\n    def __init__(self, w):\n        self.w = w\n",
    "def loop(n):\n    while n > 0:\n        n -= 1\n    return n\n",
]
NEAR_P2 = "import numpy as np\ndef pack(n):\n    pts = np.ones((n, 2))\n    return pts\n"


def crowded() -> IslandArchive:
    archive = IslandArchive(5, 5, ArchiveWeights())
    for i, score in enumerate((0.5, 0.6, 0.55, 0.4, 0.45)):
        assert archive.add(program(f"p{i}", CODES[i], score)) == Admission(True)
    return archive


def test_crowding_example_elite_scores_and_protection() -> None:
    archive = crowded()
    elite = archive.elite_scores()
    assert [elite[f"p{i}"] for i in range(5)] == pytest.approx([0.7, 1.4, 1.05, 0.0, 0.35])
    assert archive.protected_ids() == {"p1"}


@pytest.mark.parametrize(("score", "elite"), [(0.42, 0.0), (0.52, 0.7)])
def test_crowding_rejects_a_newcomer_not_better_than_the_most_similar(
    score: float, elite: float
) -> None:
    archive = crowded()
    newcomer = program("new", NEAR_P2, score)
    assert archive.newcomer_elite_score(newcomer) == pytest.approx(elite)
    assert archive.add(newcomer) == Admission(False)
    assert [p.id for p in archive.members()] == ["p0", "p1", "p2", "p3", "p4"]


def test_crowding_replaces_the_most_similar_member_with_a_better_newcomer() -> None:
    archive = crowded()
    newcomer = program("new", NEAR_P2, 0.6)
    assert archive.newcomer_elite_score(newcomer) == pytest.approx(1.4)
    assert archive.add(newcomer) == Admission(True, evicted="p2")
    assert [p.id for p in archive.members()] == ["p0", "p1", "p3", "p4", "new"]


SCRIPT = {
    "num_islands": 2,
    "population_size": 20,
    "migration_count": 5,
    "migration_interval": 15,
    "use_dynamic_islands": True,
    "spawn_productivity_threshold": 0.015,
    "spawn_cooldown_iterations": 30,
    "use_ucb_selection": True,
    "seed_code": "def solve(n):\n    return n\n",
    "seed_score": 0.5,
}


def built(**changes: object) -> tuple[AdaEvolveArchipelago, AdaEvolvePolicy]:
    from tests.adaevolve.helpers import blocks

    script = {**SCRIPT, **changes}
    population, policy = blocks(script)
    seed_run(script, population, policy)
    return population, policy


def test_after_the_seed_every_island_starts_at_the_first_improvement_intensity() -> None:
    population, policy = built(num_islands=3)
    assert [len(isl) for isl in population.islands] == [1, 1, 1]
    assert [policy.intensity(i) for i in range(3)] == pytest.approx([0.4159114211] * 3, abs=1e-10)
    assert policy.bandit.visits == [1, 0, 0]
    assert policy.bandit.rewards == [1.0, 0.0, 0.0]
    selection = select_now(policy, population, 1)
    assert selection.info["island"] == 0
    assert selection.info["intensity"] == pytest.approx(0.4159114211, abs=1e-10)


def add_child(
    population: AdaEvolveArchipelago, policy: AdaEvolvePolicy, iteration: int, score: float
) -> IterationOutcome:
    selection = select_now(policy, population, iteration)
    assert selection.parent is not None
    child = program(
        f"p{iteration}",
        f"def solve(n):\n    return n * {iteration}\n",
        score,
        selection.parent.id,
        **selection.tags,
    )
    outcome = IterationOutcome(iteration, selection, child, admitted=population.add(child))
    policy.observe(outcome)
    return outcome


def test_spawn_waits_for_low_productivity_and_the_cooldown() -> None:
    population, policy = built(spawn_productivity_threshold=0.3, spawn_cooldown_iterations=5)
    # The seed is 1 improvement in 1 evaluation; non-improving children bring it down.
    for it in range(1, 3):
        end(policy, it, add_child(population, policy, it, 0.1))
        assert len(population.islands) == 2  # 1/2, 1/3 are not below 0.3
    step = end(policy, 3, add_child(population, policy, 3, 0.1))  # 1/4 < 0.3
    assert len(population.islands) == 3
    spawned = [p for kind, p in step.events if kind == "island_spawned"]
    assert spawned and spawned[0]["island"] == 2
    assert spawned[0]["preset"] in set(PRESETS) - {"balanced"}
    assert policy.current_island == 2  # 0 visits: the min-visits rule picks it
    assert policy.intensity(2) == pytest.approx(0.4999650035, abs=1e-10)
    assert len(population.islands[2]) == len(population.top_by_proxy(5)) == 5
    for it in range(4, 8):  # cooldown: 5 iterations since the spawn at 3
        end(policy, it, add_child(population, policy, it, 0.1))
        assert len(population.islands) == 3
    end(policy, 8, add_child(population, policy, 8, 0.1))
    assert len(population.islands) == 4


def test_spawn_prefers_the_least_used_presets() -> None:
    population, policy = built(
        spawn_productivity_threshold=2.0, spawn_cooldown_iterations=0, num_islands=1
    )
    chosen = []
    for it in range(1, 5):
        step = end(policy, it, IterationOutcome(it, None, None))
        chosen += [p["preset"] for kind, p in step.events if kind == "island_spawned"]
    assert sorted(chosen) == sorted(set(PRESETS) - {"balanced"})  # each unused preset once
    assert population.islands[1].weights == PRESETS[chosen[0]]
    assert population.islands[0].weights == ArchiveWeights()  # the config's, not a preset's


def test_migration_runs_on_multiples_of_the_interval_after_the_next_island_is_chosen() -> None:
    population, policy = built(migration_interval=3, use_dynamic_islands=False)
    kinds = {}
    for it in range(1, 7):
        step = end(policy, it, add_child(population, policy, it, 0.5 + it / 10))
        kinds[it] = [kind for kind, _ in step.events]
    assert [it for it, k in kinds.items() if "migration" in k] == [3, 6]
    assert kinds[3] == ["island_chosen", "migration"]


def test_migrants_onto_the_island_just_chosen_count_as_its_own_visits() -> None:
    population, policy = built(migration_interval=1, use_dynamic_islands=False)
    before = list(policy.bandit.visits)
    step = end(policy, 1, add_child(population, policy, 1, 0.9))
    migration = next(p for kind, p in step.events if kind == "migration")
    current = migration["current_island"]
    landed = [m for m in migration["migrants"] if m["admitted"] and m["to"] == current]
    elsewhere = [m for m in migration["migrants"] if m["admitted"] and m["to"] != current]
    assert landed or elsewhere
    grew = [policy.bandit.visits[i] - before[i] for i in range(2)]
    child_island = 0
    assert grew[current] == len(landed) + (1 if current == child_island else 0)
    assert math.isfinite(policy.bandit.global_best)


def test_fixed_intensity_ablation_ignores_the_signal() -> None:
    population, policy = built()
    policy.config = policy.config.model_copy(update={"use_adaptive_search": False})
    assert policy.intensity(0) == 0.4
    assert select_now(policy, population, 1).info["intensity"] == 0.4


def test_round_robin_and_no_migration_ablations() -> None:
    population, policy = built(use_ucb_selection=False, use_dynamic_islands=False, num_islands=3)
    policy.config = policy.config.model_copy(update={"use_migration": False})
    chosen = []
    for it in range(1, 16):
        step = end(policy, it, add_child(population, policy, it, 0.5))
        chosen.append(policy.current_island)
        assert "migration" not in [kind for kind, _ in step.events]
    assert chosen == [(it + 1) % 3 for it in range(1, 16)]
