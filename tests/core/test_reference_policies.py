"""topk, best_of_n and best_of_n_attempts against the real reference, step by step on scripted
populations (audit §1.1): live against SkyDiscover 0.1.0 (the oracle venv), and against HEAD
59643ef's golden trace where the two references differ.

Each script (``tests/oracles/cases.py``) is a seed program, then per step: a ``sample(k)`` on
both sides, and (75 % of the steps) a child with scripted metrics — a float ``combined_score``
(ties included), a missing one, the text ``"n/a"``, or a bool — added with the sampled parent.
Both sides get the same ``random`` seed after the seed program was added; every step's parent
and context ids must be equal.  k ∈ {0,1,2,4,7}, N ∈ {1,2,5}.

Bool metrics *other than* ``combined_score`` are where the references part: 0.1.0's fitness
counts them in the mean that ranks programs, HEAD's (which we follow) does not.  Those scripts
are compared with HEAD's recorded steps instead, and a test shows 0.1.0 really differs there.

``best_of_n_attempts`` is a Galapagos variant (its budget is charged at every selection,
failed iterations included); its reference is the same ``BestOfNDatabase`` with the counter
rule changed accordingly — advanced once per sample instead of once per admitted child (see
``probes.drive_policies``).
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from harness.components.population import InMemoryPopulation
from harness.components.selection import (
    BestOfNAttemptsPolicy,
    BestOfNConfig,
    BestOfNPolicy,
    TopKConfig,
    TopKPolicy,
)
from harness.core.records import IterationOutcome, Program
from harness.core.scoring import get_score
from tests.fakes import select_now
from tests.oracles import cases
from tests.oracles.reference import REGENERATE, Reference, golden

KINDS = ["topk", "best_of_n", "attempts"]
LIVE_SEEDS = {"topk": 1, "best_of_n": 2, "attempts": 3}


def ours(script: dict[str, Any]) -> list[list[Any]]:
    """Our policy on ``script``: per step ``[parent id, [context ids]]``."""
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
    population.add(Program("p0", "s", 0, script["seed"], get_score(script["seed"])))
    steps = []
    for i, metrics in enumerate(script["steps"], 1):
        selection = select_now(policy, population, i)
        assert selection.parent is not None
        steps.append([selection.parent.id, [p.id for p in selection.inspirations]])
        child = None
        if metrics is not None:
            child = Program(f"p{i}", "c", i, metrics, get_score(metrics), selection.parent.id)
            population.add(child)
        policy.observe(IterationOutcome(i, selection, child, admitted=child is not None))
    return steps


def mismatches(scripts: list[dict[str, Any]], theirs: list[list[Any]]) -> list[Any]:
    return [
        (n, step, mine, want)
        for n, (script, want_steps) in enumerate(zip(scripts, theirs, strict=True))
        for step, (mine, want) in enumerate(zip(ours(script), want_steps, strict=True))
        if mine != want
    ]


def golden_scripts(kind: str) -> tuple[list[dict[str, Any]], list[list[Any]]]:
    scripts = cases.policy_scripts(
        kind, cases.GOLDEN_POLICY_SEEDS[kind], count=cases.GOLDEN_POLICY_COUNT, bool_metrics=True
    )
    trace = golden("policies")["trace"][kind]
    assert trace["inputs"] == cases.digest(scripts), (
        f"the {kind} scripts changed since HEAD's trace was recorded: {REGENERATE} policies"
    )
    return scripts, trace["steps"]


@pytest.mark.parametrize("kind", KINDS)
def test_parents_and_context_equal_the_reference_at_every_step(
    kind: str, reference: Reference
) -> None:
    scripts = cases.policy_scripts(kind, LIVE_SEEDS[kind])
    theirs = reference.probe("drive_policies", scripts)
    found = mismatches(scripts, theirs)
    assert found == [], found[:5]
    assert sum(len(s["steps"]) for s in scripts) > 600  # the scripts really exercised it
    assert {s["k"] for s in scripts} == set(cases.KS)
    assert {s["n"] for s in scripts} == set(cases.NS)


@pytest.mark.parametrize("kind", KINDS)
def test_parents_and_context_equal_head_with_bool_metrics(kind: str) -> None:
    """HEAD's recorded steps, on scripts with bool metrics in the mean (see the module doc)."""
    scripts, theirs = golden_scripts(kind)
    found = mismatches(scripts, theirs)
    assert found == [], found[:5]
    assert any(
        "flag" in m and not isinstance(m.get("combined_score"), float)
        for s in scripts
        for m in s["steps"]
        if m
    )


@pytest.mark.parametrize("kind", KINDS)
def test_bool_metrics_are_where_0_1_0_and_head_differ(kind: str, reference: Reference) -> None:
    """Why the trace above is pinned from HEAD: 0.1.0 draws differently on the same scripts."""
    scripts, head = golden_scripts(kind)
    theirs = reference.probe("drive_policies", scripts)
    assert theirs != head
