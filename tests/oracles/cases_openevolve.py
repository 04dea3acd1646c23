"""Scripted OpenEvolve runs shared by our side and the reference's (standard library only).

A scenario is a database configuration, a seed and a number of steps.  Each step samples a
parent from island ``(step - 1) % num_islands`` (the parallel controller's round-robin), makes
a child from it with :func:`child_of` (deterministic in the step and the parent, so both sides
make the same child from the same parent), adds it to that island, bumps the island's
generation and migrates when due.
"""

from __future__ import annotations

import random
from typing import Any

SEED_CODE = """import math


def solve(n):
    total = 0
    for i in range(n):
        total += math.sqrt(i) * 1.5
    return total
"""

SCENARIOS: dict[str, dict[str, Any]] = {
    # The card's defaults: one migration (generation 50), no eviction.
    "defaults": {"config": {}, "steps": 260, "seed": 3, "num_inspirations": 3},
    # Small caps: eviction, a full archive, frequent migration, a small reference set.
    "small": {
        "config": {
            "num_islands": 3,
            "archive_size": 8,
            "population_size": 30,
            "migration_interval": 6,
            "migration_rate": 0.3,
            "diversity_reference_size": 5,
            "elite_selection_ratio": 0.4,
        },
        "steps": 120,
        "seed": 11,
        "num_inspirations": 4,
    },
    # A metric as a dimension, bins per dimension, two islands (both neighbours are one).
    "custom_dims": {
        "config": {
            "num_islands": 2,
            "archive_size": 12,
            "population_size": 50,
            "migration_interval": 10,
            "feature_dimensions": ["complexity", "speed"],
            "feature_bins": {"complexity": 4, "speed": 6},
        },
        "steps": 120,
        "seed": 5,
        "num_inspirations": 3,
    },
    # The built-in score dimension, and metrics without combined_score (the mean decides).
    "score_dim": {
        "config": {
            "num_islands": 4,
            "archive_size": 16,
            "population_size": 60,
            "migration_interval": 8,
            "feature_dimensions": ["score", "diversity"],
        },
        "steps": 120,
        "seed": 7,
        "num_inspirations": 3,
        "mean_scores": True,
    },
}


def seed_metrics(scenario: dict[str, Any]) -> dict[str, Any]:
    if scenario.get("mean_scores"):
        return {"accuracy": 0.3, "speed": 0.2}
    return {"combined_score": 0.3, "speed": 0.5}


def child_of(
    scenario_name: str, step: int, parent_id: str, parent_code: str, parent_metrics: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """The child a scripted model and evaluator make from a parent at ``step``."""
    scenario = SCENARIOS[scenario_name]
    rng = random.Random(f"{scenario_name}:{step}:{parent_id}")
    lines = parent_code.split("\n")
    roll = rng.random()
    if roll < 0.06:
        code = parent_code  # the same code again: identical-code and cache paths
    elif roll < 0.45:
        at = rng.randint(1, len(lines) - 1)
        lines.insert(at, f"    x{step} = {rng.randint(0, 999)} * {'y' * rng.randint(0, 12)}1")
        code = "\n".join(lines)
    elif roll < 0.7 and len(lines) > 6:
        del lines[rng.randint(3, len(lines) - 2)]
        code = "\n".join(lines)
    else:
        at = rng.randint(0, len(lines) - 1)
        lines[at] = lines[at] + f"  # {chr(rng.randint(33, 126)) * rng.randint(1, 30)}"
        code = "\n".join(lines)
    base = parent_metrics.get("combined_score", parent_metrics.get("accuracy", 0.3))
    score = round(min(1.0, max(0.0, float(base) + rng.gauss(0.0, 0.12))), 4)
    speed = round(rng.uniform(0.0, 3.0), 3)
    if scenario.get("mean_scores"):
        return code, {"accuracy": score, "speed": speed}
    return code, {"combined_score": score, "speed": speed}


def fixed_population(size: int = 40, islands: int = 5) -> list[dict[str, Any]]:
    """Programs with distinct scores and fixed islands, added in this order (no sampling, so
    the database they build does not depend on set order)."""
    rng = random.Random(1234)
    out = [{"id": "p0", "code": SEED_CODE, "metrics": {"combined_score": 0.3}, "island": 0}]
    code = SEED_CODE
    for i in range(1, size):
        code = code + f"    y{i} = {'z' * rng.randint(0, 40)}{i}\n"
        score = round(0.05 + 0.9 * rng.random(), 6)
        out.append(
            {
                "id": f"p{i}",
                "code": code,
                "metrics": {"combined_score": score},
                "island": i % islands,
            }
        )
    return out
