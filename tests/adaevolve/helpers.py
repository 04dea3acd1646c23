"""Driving AdaEvolve's blocks without the controller (with :class:`tests.fakes.RecordingStep`),
and the reference's drive of a scripted run."""

from __future__ import annotations

import asyncio
import dataclasses
import random
from typing import Any

from harness.core.records import IterationOutcome, Program
from scaffolds.adaevolve.policy import AdaEvolvePolicy, AdaEvolvePolicyConfig
from scaffolds.adaevolve.population import AdaEvolveArchipelago, ArchipelagoConfig
from tests.fakes import RecordingStep, select_now


def program(pid: str, code: str, score: float, parent: str | None = None, **meta: Any) -> Program:
    return Program(
        id=pid,
        code=code,
        iteration=0,
        metrics={"combined_score": score},
        score=score,
        parent_id=parent,
        metadata=meta,
    )


def end(policy: AdaEvolvePolicy, iteration: int, outcome: IterationOutcome) -> RecordingStep:
    step = RecordingStep(iteration)
    asyncio.run(policy.end_iteration(step, outcome))
    return step


def blocks(script: dict[str, Any]) -> tuple[AdaEvolveArchipelago, AdaEvolvePolicy]:
    population = AdaEvolveArchipelago(
        ArchipelagoConfig(
            num_islands=script["num_islands"],
            population_size=script["population_size"],
            migration_count=script["migration_count"],
        )
    )
    config = AdaEvolvePolicyConfig(
        migration_interval=script["migration_interval"],
        use_dynamic_islands=script["use_dynamic_islands"],
        spawn_productivity_threshold=script["spawn_productivity_threshold"],
        spawn_cooldown_iterations=script["spawn_cooldown_iterations"],
        use_ucb_selection=script["use_ucb_selection"],
    )
    policy = AdaEvolvePolicy(random.Random(script.get("rng", 0)), config, population, None)
    return population, policy


def seed_run(
    script: dict[str, Any], population: AdaEvolveArchipelago, policy: AdaEvolvePolicy
) -> None:
    """Iteration 0 as the controller runs it: the seed admitted, observed, hooks."""
    seed = program("p0", script["seed_code"], script["seed_score"])
    admitted = population.add(seed)
    outcome = IterationOutcome(0, None, seed, admitted=admitted)
    policy.observe(outcome)
    end(policy, 0, outcome)


def drive(script: dict[str, Any]) -> list[list[Any]]:
    """Our blocks on a reference script (see ``tests/oracles/probes.drive_adaevolve``)."""
    population, policy = blocks(script)
    seed_run(script, population, policy)
    policy.rng.seed(script["rng"])
    steps = []
    for i, step in enumerate(script["steps"], 1):
        samples = []
        selection = None
        for _ in range(step["samples"]):
            selection = select_now(policy, population, i)
            assert selection.parent is not None
            samples.append(
                [
                    selection.info["island"],
                    selection.info["mode"],
                    selection.parent.id,
                    [p.id for p in selection.inspirations],
                ]
            )
        assert selection is not None and selection.parent is not None
        child = None
        admitted = False
        if step["code"] is not None:
            child = dataclasses.replace(
                program(f"p{i}", step["code"], step["score"], selection.parent.id),
                iteration=i,
                metadata=dict(selection.tags),
            )
            admitted = population.add(child)
        outcome = IterationOutcome(i, selection, child, admitted=admitted)
        policy.observe(outcome)
        end(policy, i, outcome)
        members = [[p.id for p in isl.members()] for isl in population.islands]
        steps.append([samples, policy.current_island, len(population.islands), members])
    return steps
