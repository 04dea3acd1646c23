"""topk, best_of_n and best_of_n_attempts against the real reference (SkyDiscover 0.1.0's
``TopKDatabase`` and ``BestOfNDatabase``), step by step on scripted populations.

Each script is a seed program, then per step: ``sample(k)`` on both sides, and (75 % of the
steps) a child with scripted metrics — a float ``combined_score`` (ties included), a missing
one, the text ``"n/a"``, or a bool — added with the sampled parent.  Both sides get the same
``random`` seed after the seed program was added; every step's parent and context ids must be
equal.  Bool *metrics other than* ``combined_score`` are left out: 0.1.0's fitness counts them
in the mean and HEAD (which we follow) does not.

``best_of_n_attempts`` is a Galapagos variant (its budget is charged at selection, failures
included); its reference is the same ``BestOfNDatabase`` driven the way the variant counts —
its counter advanced once per sample instead of once per ``add`` — which is the rule the
variant's card states.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from harness.components.population import InMemoryPopulation
from harness.core.records import IterationOutcome, Program
from harness.core.scoring import get_score
from scaffolds.best_of_n.policy import BestOfNConfig, BestOfNPolicy
from scaffolds.best_of_n_attempts import BestOfNAttemptsPolicy
from scaffolds.topk.policy import TopKConfig, TopKPolicy

SCRIPTS = 60

REFERENCE = """
import random
from skydiscover.config import DatabaseConfig
from skydiscover.search.base_database import Program
from skydiscover.search.topk.database import TopKDatabase
from skydiscover.search.best_of_n.database import BestOfNDatabase

out = []
for script in DATA:
    config = DatabaseConfig()
    config.random_seed = None
    if script["kind"] == "topk":
        db = TopKDatabase("t", config)
    else:
        config.best_of_n = script["n"]
        db = BestOfNDatabase("b", config)
    db.add(Program(id="p0", solution="s", metrics=script["seed"], iteration_found=0), iteration=0)
    random.seed(script["rng"])
    steps = []
    for i, step in enumerate(script["steps"], 1):
        parents, context = db.sample(num_inspirations=script["k"])
        parent = list(parents.values())[0]
        steps.append([parent.id, [p.id for p in context[""]]])
        if script["kind"] == "attempts":
            # the variant's rule: one use per sample, failed or not
            db.parent_iteration_count += 1
        if step is not None:
            child = Program(id=f"p{i}", solution="c", metrics=step, iteration_found=i,
                            parent_id=parent.id)
            if script["kind"] == "attempts":
                db.current_parent_id, kept = None, db.current_parent_id
                db.add(child, iteration=i)  # add() must not count for the variant
                db.current_parent_id = kept
            else:
                db.add(child, iteration=i)
    out.append(steps)
print(json.dumps(out))
"""


def _metrics(rng: random.Random, pool: list[float]) -> dict[str, Any]:
    roll = rng.random()
    if roll < 0.1:
        return {"other": rng.choice(pool)}  # no combined_score: the mean decides
    if roll < 0.15:
        return {"combined_score": "n/a", "other": rng.choice(pool)}
    if roll < 0.2:
        return {"combined_score": rng.choice([True, False])}
    return {"combined_score": rng.choice(pool)}  # ties are likely: the pool is small


def scripts(kind: str, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out = []
    for _ in range(SCRIPTS):
        pool = [round(rng.uniform(0, 1), 2) for _ in range(6)]
        steps = [
            _metrics(rng, pool) if rng.random() >= 0.25 else None  # 25 % failed iterations
            for _ in range(rng.randint(5, 25))
        ]
        out.append(
            {
                "kind": kind,
                "k": rng.choice([0, 1, 2, 4, 7]),
                "n": rng.choice([1, 2, 5]),
                "rng": rng.randrange(1 << 30),
                "seed": {"combined_score": rng.choice(pool)},
                "steps": steps,
            }
        )
    return out


def ours(script: dict[str, Any]) -> list[list[Any]]:
    kind, k = script["kind"], script["k"]
    rng = random.Random(script["rng"])
    if kind == "topk":
        policy: Any = TopKPolicy(rng, TopKConfig(num_inspirations=k))
    elif kind == "best_of_n":
        policy = BestOfNPolicy(rng, BestOfNConfig(best_of_n=script["n"], num_inspirations=k))
    else:
        policy = BestOfNAttemptsPolicy(
            rng, BestOfNConfig(best_of_n=script["n"], num_inspirations=k)
        )
    population = InMemoryPopulation()
    seed = Program("p0", "s", 0, script["seed"], get_score(script["seed"]))
    population.add(seed)
    steps = []
    for i, metrics in enumerate(script["steps"], 1):
        selection = policy.select(population, i)
        assert selection.parent is not None
        steps.append([selection.parent.id, [p.id for p in selection.inspirations]])
        child = None
        if metrics is not None:
            child = Program(f"p{i}", "c", i, metrics, get_score(metrics), selection.parent.id)
            population.add(child)
        policy.observe(IterationOutcome(i, selection, child, admitted=child is not None))
    return steps


@pytest.mark.parametrize("kind", ["topk", "best_of_n", "attempts"])
def test_parents_and_context_equal_the_reference_at_every_step(kind: str, reference: Any) -> None:
    cases = scripts(kind, seed={"topk": 1, "best_of_n": 2, "attempts": 3}[kind])
    theirs = reference(REFERENCE, cases)
    mismatches = [
        (n, step, mine, want)
        for n, (case, want_steps) in enumerate(zip(cases, theirs, strict=True))
        for step, (mine, want) in enumerate(zip(ours(case), want_steps, strict=True))
        if mine != want
    ]
    assert mismatches == [], mismatches[:5]
    assert sum(len(c["steps"]) for c in cases) > 600  # the scripts really exercised it
