"""Tier choice frequencies of ``three_tier_explore_exploit`` over thousands of seeded draws.

The card's ratios are 0.2 explore / 0.7 exploit / 0.1 fitness-weighted.  Our counts must sit
within binomial bounds of them, and so must the reference's own (OpenEvolve 0.4.0 with its
plain sets, where step-by-step equality is impossible: see ``test_reference_database.py``);
the parent each side picks must follow the same distribution over the same island.
"""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest

from harness.core.records import Program
from scaffolds.openevolve.population import MapElitesIslandsConfig, MapElitesIslandsPopulation
from scaffolds.openevolve.selection import ThreeTierConfig, ThreeTierPolicy
from tests.fakes import select_now
from tests.oracles import cases_openevolve as cases

DRAWS = 3000
ISLAND = 2
CARD = {"exploration": 0.2, "exploitation": 0.7, "weighted": 0.1}
#: Allowed distance from the expected count, in standard deviations.  A seeded test is
#: deterministic (the seeds here measured within 0.85σ), and 3σ keeps the bound honest: a ratio
#: off by 0.03 is 90 draws at 3000, past the widest bound in use, 3·sqrt(3000·0.5·0.5) ≈ 82
#: (0.7: 75, 0.2: 66, 0.1: 49).
SIGMAS = 3


def populated(seed: int) -> tuple[MapElitesIslandsPopulation, ThreeTierPolicy]:
    pop = MapElitesIslandsPopulation(MapElitesIslandsConfig(), random.Random(0))
    for spec in cases.fixed_population():
        pop.add(
            Program(
                id=spec["id"],
                code=spec["code"],
                iteration=0,
                metrics=spec["metrics"],
                score=spec["metrics"]["combined_score"],
                metadata={"island": spec["island"]},
            )
        )
    return pop, ThreeTierPolicy(random.Random(seed), ThreeTierConfig(), pop)


def our_counts(seed: int) -> tuple[Counter[str], Counter[str]]:
    pop, policy = populated(seed)
    tiers: Counter[str] = Counter()
    parents: Counter[str] = Counter()
    for _ in range(DRAWS):
        selection = select_now(policy, pop, ISLAND + 1)  # iteration 3 samples island 2
        tiers[selection.info["tier"]] += 1
        assert selection.parent is not None
        parents[selection.parent.id] += 1
    return tiers, parents


def assert_card_ratios(tiers: Counter[str] | dict[str, int]) -> None:
    assert sum(tiers.values()) == DRAWS
    for tier, p in CARD.items():
        expected, sd = DRAWS * p, math.sqrt(DRAWS * p * (1 - p))
        assert abs(tiers.get(tier, 0) - expected) <= SIGMAS * sd, (tier, tiers)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tier_frequencies_match_the_card(seed: int) -> None:
    tiers, _ = our_counts(seed)
    assert_card_ratios(tiers)


def test_tier_ratios_follow_the_config() -> None:
    pop, _ = populated(0)
    config = ThreeTierConfig(exploration_ratio=0.5, exploitation_ratio=0.1)
    policy = ThreeTierPolicy(random.Random(9), config, pop)
    tiers = Counter(select_now(policy, pop, 3).info["tier"] for _ in range(DRAWS))
    for tier, p in {"exploration": 0.5, "exploitation": 0.1, "weighted": 0.4}.items():
        assert abs(tiers[tier] - DRAWS * p) <= SIGMAS * math.sqrt(DRAWS * p * (1 - p)), tiers


@pytest.mark.slow
def test_tiers_and_parents_distributed_as_the_reference(reference) -> None:  # type: ignore[no-untyped-def]
    code = (
        "import probes_openevolve\nprint(json.dumps(probes_openevolve.sample_frequencies(*DATA)))"
    )
    theirs = reference(code, [DRAWS, 77, ISLAND, 3])
    assert_card_ratios(theirs["tiers"])
    tiers, parents = our_counts(77)
    assert_card_ratios(tiers)
    pop, _ = populated(0)
    assert sorted(p.id for p in pop.island_members(ISLAND)) == theirs["island"]
    assert set(parents) <= set(theirs["island"]) | {p.id for p in pop.archive_members()}
    for pid in set(parents) | set(theirs["parents"]):
        a, b = parents.get(pid, 0), theirs["parents"].get(pid, 0)
        p = (a + b) / (2 * DRAWS)
        bound = SIGMAS * math.sqrt(2 * DRAWS * p * (1 - p)) + 1
        assert abs(a - b) <= bound, (pid, a, b)
