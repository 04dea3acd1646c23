"""Drive the openevolve blocks through a scripted scenario (``tests/oracles/cases_openevolve``)
exactly as the probe drives OpenEvolve 0.4.0, and dump the same state."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Mapping
from typing import Any

from harness.core.records import IterationOutcome, Program
from scaffolds.openevolve.population import MapElitesIslandsConfig, MapElitesIslandsPopulation
from scaffolds.openevolve.selection import ThreeTierConfig, ThreeTierPolicy
from tests.fakes import RecordingStep, select_now
from tests.oracles import cases_openevolve as cases

SELECTION_KEYS = {"exploration_ratio", "exploitation_ratio", "elite_selection_ratio"}


class ScriptStep(RecordingStep):
    """A step whose copies are named ``source>island#k``, as the probe names the reference's
    migrants (``copies`` counts them across steps)."""

    def __init__(self, iteration: int, copies: Counter[str]) -> None:
        super().__init__(iteration, max_iterations=10**6)
        self._named = copies

    def copy_id(self, source: Program, metadata: Mapping[str, Any]) -> str:
        pair = f"{source.id}>{metadata['island']}"
        self._named[pair] += 1
        return f"{pair}#{self._named[pair]}"


def build(name: str, rng: random.Random) -> tuple[MapElitesIslandsPopulation, ThreeTierPolicy]:
    scenario = cases.SCENARIOS[name]
    pop_keys = {k: v for k, v in scenario["config"].items() if k not in SELECTION_KEYS}
    sel_keys = {k: v for k, v in scenario["config"].items() if k in SELECTION_KEYS}
    population = MapElitesIslandsPopulation(MapElitesIslandsConfig(**pop_keys), rng)
    policy = ThreeTierPolicy(
        rng, ThreeTierConfig(num_inspirations=scenario["num_inspirations"], **sel_keys), population
    )
    return population, policy


def state(pop: MapElitesIslandsPopulation) -> dict[str, Any]:
    return {
        "programs": [p.id for p in pop.programs()],
        "islands": [list(island) for island in pop.islands],
        "cells": [dict(grid) for grid in pop.cells],
        "archive": list(pop.archive),
        "best": pop.best_id,
        "island_best": list(pop.island_best),
        "generations": list(pop.generations),
        "last_migration": pop.last_migration,
        "stats": pop.scaler.state_dict(),
    }


def scripted_run(name: str) -> dict[str, Any]:
    """Our side of ``probes_openevolve.scripted_run``; ``events`` are the blocks' records."""
    scenario = cases.SCENARIOS[name]
    # One stream for both blocks: the reference draws everything from the global ``random``.
    rng = random.Random(scenario["seed"])
    pop, policy = build(name, rng)
    copies: Counter[str] = Counter()
    seed = Program(
        id="p0", code=cases.SEED_CODE, iteration=0, metrics=cases.seed_metrics(scenario), score=0
    )
    pop.add(seed)
    step0 = ScriptStep(0, copies)
    asyncio.run(pop.end_iteration(step0, IterationOutcome(0, None, seed, admitted=True)))
    trace: list[dict[str, Any]] = [{"state": state(pop), "events": step0.events}]
    for it in range(1, scenario["steps"] + 1):
        selection = select_now(policy, pop, it)
        parent = selection.parent
        assert parent is not None
        code, metrics = cases.child_of(name, it, parent.id, parent.code, dict(parent.metrics))
        child = Program(
            id=f"p{it}",
            code=code,
            iteration=it,
            metrics=metrics,
            score=0,
            parent_id=parent.id,
            generation=parent.generation + 1,
            metadata=dict(selection.tags),
        )
        admitted = pop.add(child)
        step = ScriptStep(it, copies)
        outcome = IterationOutcome(it, selection, child, admitted=admitted)
        before = pop.last_migration
        asyncio.run(pop.end_iteration(step, outcome))
        trace.append(
            {
                "island": selection.tags["island"],
                "tier": selection.info["tier"],
                "parent": parent.id,
                "inspirations": [p.id for p in selection.inspirations],
                "migrated": any(kind == "migration" for kind, _ in step.events),
                "state": state(pop),
                "events": step.events,
                "info": dict(selection.info),
                "last_migration_before": before,
            }
        )
    return {"trace": trace}
