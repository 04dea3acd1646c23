"""Inputs shared by the live differential tests and the golden recipes (standard library only:
the recorder imports this module inside a reference interpreter).

A *policy script* is a seed program's metrics, then per step either a child's metrics or
``None`` (a failed iteration: nothing is added).  Both sides draw with the same ``random`` seed,
given after the seed program was added (audit §1.1).
"""

from __future__ import annotations

import hashlib
import importlib.util
import itertools
import json
import random
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

#: The audit's grid: k ∈ {0,1,2,4,7}, N ∈ {1,2,5}.
KS = (0, 1, 2, 4, 7)
NS = (1, 2, 5)


def _child_metrics(rng: random.Random, pool: list[float], bool_metrics: bool) -> dict[str, Any]:
    roll = rng.random()
    if roll < 0.1:
        return {"other": rng.choice(pool)}  # no combined_score: the mean decides
    if roll < 0.15:
        return {"combined_score": "n/a", "other": rng.choice(pool)}
    if roll < 0.2:
        return {"combined_score": rng.choice([True, False])}
    if bool_metrics and roll < 0.35:
        # No usable combined_score and a bool among the metrics: HEAD leaves the bool out of
        # the mean, 0.1.0 counts it (the one place the two differ for these policies).
        head = {"combined_score": "n/a"} if rng.random() < 0.5 else {}
        return {**head, "other": rng.choice(pool), "flag": rng.choice([True, False])}
    return {"combined_score": rng.choice(pool)}  # ties are likely: the pool is small


def policy_scripts(
    kind: str, seed: int, *, count: int = 60, bool_metrics: bool = False
) -> list[dict[str, Any]]:
    """``count`` random scripts for ``kind`` (``topk``, ``best_of_n`` or ``attempts``)."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        pool = [round(rng.uniform(0, 1), 2) for _ in range(6)]
        steps = [
            _child_metrics(rng, pool, bool_metrics) if rng.random() >= 0.25 else None  # 25 % fail
            for _ in range(rng.randint(5, 25))
        ]
        out.append(
            {
                "kind": kind,
                "k": rng.choice(KS),
                "n": rng.choice(NS),
                "rng": rng.randrange(1 << 30),
                "seed": {"combined_score": rng.choice(pool)},
                "steps": steps,
            }
        )
    return out


def score_cases() -> list[dict[str, Any]]:
    """Metric dicts for ``get_score``: every mix of a combined_score kind and other metrics."""
    combined: list[Any] = [None, 0, 0.75, -2, True, False, "n/a", "3.5", ""]
    others: list[dict[str, Any]] = [
        {},
        {"a": 0.5},
        {"a": 0.5, "b": 2},
        {"a": 0.5, "flag": True},
        {"flag": False},
        {"a": 1, "note": "text"},
        {"timeout": True, "a": 0.25},
    ]
    cases = []
    for cs, extra in itertools.product(combined, others):
        metrics = dict(extra)
        if cs is not None:
            metrics["combined_score"] = cs
        cases.append(metrics)
    return cases


def failure_cases() -> list[dict[str, Any]]:
    """Metrics and artifacts for the failure predicate (values the sandbox schema can carry,
    plus the reference's own ``"error"`` strings)."""
    validity: list[Any] = [None, 0, -1, 1, 0.0, 0.5, True, False]
    timeout: list[Any] = [None, True, False]
    combined: list[Any] = [None, 0, 0.0, False, True, 0.3]
    error: list[Any] = [None, 0.0, "boom"]
    artifact: list[Any] = [None, "trace"]
    cases = []
    for v, t, cs, e, a in itertools.product(validity, timeout, combined, error, artifact):
        metrics = {
            k: value
            for k, value in (("validity", v), ("timeout", t), ("combined_score", cs), ("error", e))
            if value is not None
        }
        cases.append({"metrics": metrics, "artifacts": {} if a is None else {"error": a}})
    return cases


def digest(data: Any) -> str:
    """The hash a golden trace keeps of its inputs (the test regenerates them and compares)."""
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


#: The golden policy scripts: kind → generator seed (``bool_metrics=True``), and how many.
GOLDEN_POLICY_SEEDS = {"topk": 101, "best_of_n": 102, "attempts": 103}
GOLDEN_POLICY_COUNT = 30

#: The EvoX seed strategy's draws: RNG seeds and the k of each successive ``sample``.
SEED_STRATEGY = {"seeds": [0, 3, 99], "ks": [4, 4, 2, 0, 7, 3, 4, 4]}

#: Valid(·) fixtures left out of the comparisons: ``call_time`` and ``threads`` only exercise
#: limits the reference lacks (a call's CPU time, the sandbox's task count) and cost seconds (or
#: a thread bomb on the host) on the reference's side.
VALID_SKIPPED = ("call_time", "threads")


def valid_fixtures() -> dict[str, str]:
    """The strategy modules of ``tests/evox/strategies.py`` (our fixtures; loaded by path so the
    recorder can read them next to a snapshot whose own ``tests`` package would shadow ours)."""
    spec = importlib.util.spec_from_file_location(
        "evox_fixtures", ROOT / "tests/evox/strategies.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fixtures = {"good": module.GOOD, **module.FAILS_EXACTLY, **module.BOUNDARY}
    return {name: source for name, source in fixtures.items() if name not in VALID_SKIPPED}


#: AdaEvolve scripts: a code vocabulary the children's programs are drawn from (distances vary).
_ADA_WORDS = (
    "import numpy as np",
    "import math",
    "from scipy import optimize",
    "for i in range(n):",
    "while k < n:",
    "x = np.zeros(n)",
    "y = math.sqrt(x + 1)",
    "total += value * weight",
    "best = max(best, score)",
    "return sorted(items)[:k]",
    "with open(path) as handle:",
    "result = optimize.minimize(f, x0)",
    "points.append((a, b))",
    "def helper(a, b):",
    "class Packer:",
    "try:",
    "lambda v: v * 2",
)


def adaevolve_scripts(seed: int, count: int) -> list[dict[str, Any]]:
    """Scripted AdaEvolve runs for the differential tests: islands, archive size, migration and
    spawn settings, the seed's score, then per iteration the samples it draws (1-3: failed
    attempts re-sample) and the child's code and ``combined_score`` (``None``: every attempt
    failed)."""
    rng = random.Random(seed)
    scripts = []
    for n in range(count):
        spawn = n % 3 == 0
        script: dict[str, Any] = {
            "rng": rng.randrange(1 << 30),
            "num_islands": rng.choice([1, 2, 3]),
            "population_size": rng.choice([4, 6, 20]),
            "migration_interval": rng.choice([3, 5, 15]),
            "migration_count": rng.choice([1, 2, 5]),
            "use_dynamic_islands": spawn,
            "spawn_productivity_threshold": 0.6 if spawn else 0.015,
            "spawn_cooldown_iterations": rng.choice([2, 4]) if spawn else 30,
            "use_ucb_selection": rng.random() < 0.8,
            "seed_score": round(rng.uniform(0.1, 0.5), 3),
            "seed_code": "def solve(n):\n    return n\n",
            "steps": [],
        }
        for i in range(1, rng.choice([12, 25, 40]) + 1):
            samples = rng.choice([1, 1, 1, 2, 3])
            if rng.random() < 0.12:
                script["steps"].append({"samples": samples, "code": None, "score": None})
                continue
            lines = rng.sample(_ADA_WORDS, rng.randint(2, 6))
            code = "\n".join(lines + [f"k = {i}"]) + "\n"
            score = round(rng.choice([rng.uniform(0.0, 1.2), 0.5, 0.75]), 3)
            script["steps"].append({"samples": samples, "code": code, "score": score})
        scripts.append(script)
    return scripts


def adaevolve_controller_scripts(seed: int, count: int) -> list[dict[str, Any]]:
    """Scripted AdaEvolve runs through the controller: the database settings, then per
    iteration three attempt outcomes used in order until one succeeds (``"llm_error"``, or a
    program and its metrics; ``validity: 0`` fails), and the guide model's answers in turn
    (``True``: three ideas, ``False``: no usable answer)."""
    rng = random.Random(seed)
    scripts = []
    for n in range(count):
        spawn = n % 2 == 1
        script: dict[str, Any] = {
            "rng": rng.randrange(1 << 30),
            "num_islands": rng.choice([2, 3]),
            "population_size": rng.choice([4, 20]),
            "migration_interval": rng.choice([3, 5]),
            "migration_count": 2,
            "use_dynamic_islands": spawn,
            "spawn_productivity_threshold": 0.4 if spawn else 0.015,
            "spawn_cooldown_iterations": 4 if spawn else 30,
            "paradigm_window_size": rng.choice([3, 4]),
            "paradigm_improvement_threshold": 0.3,
            "seed_code": "def solve(n):\n    return n\n",
            "seed_score": 0.3,
            "guide": [rng.random() < 0.7 for _ in range(12)],
            "iterations": [],
        }
        for i in range(1, rng.choice([16, 24]) + 1):
            attempts: list[Any] = []
            for a in range(3):
                roll = rng.random()
                if roll < 0.08:
                    attempts.append("llm_error")
                    continue
                lines = rng.sample(_ADA_WORDS[:3], rng.randint(0, 2))
                code = "\n".join(lines + ["def solve(n):", f"    return n * {i}.{a}"]) + "\n"
                if roll < 0.3:
                    metrics: dict[str, Any] = {"validity": 0, "combined_score": 0.0}
                else:
                    score = round(rng.choice([rng.uniform(0.0, 0.9), 0.3, 0.45]), 3)
                    metrics = {"combined_score": score, "validity": 1}
                attempts.append({"code": code, "metrics": metrics})
            script["iterations"].append(attempts)
        scripts.append(script)
    return scripts


#: The golden controller scripts: generator seed and count.
ADAEVOLVE_CONTROLLER_SEED = 59
ADAEVOLVE_CONTROLLER_COUNT = 16


def paradigm_ideas(request: int) -> list[dict[str, str]]:
    """The guide model's ideas for its ``request``-th successful answer (both sides)."""
    return [
        {
            "idea": f"idea {request}.{k}",
            "description": f"description {request}.{k}",
            "what_to_optimize": "combined_score",
            "cautions": "none",
            "approach_type": f"family{k}",
        }
        for k in range(3)
    ]
