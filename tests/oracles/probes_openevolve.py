"""OpenEvolve 0.4.0 driver, run *inside* the oracle interpreter (standard library plus
``openevolve``).

``scripted_run(name)`` plays a scenario of ``cases_openevolve`` through the reference's own
primitives in the order its parallel controller calls them with one iteration in flight:
``sample_from_island`` → ``add(child, target_island=island)`` →
``increment_island_generation`` → ``should_migrate``/``migrate_programs``.

Two substitutions make each step comparable, and change no decision of the reference:
- Its islands and archive are Python sets of uuid strings, whose iteration order (hence which
  element ``random.choice(list(island))`` picks) is arbitrary; they are replaced by
  insertion-ordered sets with the same API.  Migrant copies get readable ids
  (``source>island#k``) instead of uuids.
- The module's global ``random`` is a ``random.Random(seed)`` of the scenario, so our side can
  draw from the same stream.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, MutableSet
from typing import Any

import cases_openevolve as cases


class OrderedSet(MutableSet):  # type: ignore[type-arg]
    def __init__(self, items: Iterable[Any] = ()) -> None:
        self._items = dict.fromkeys(items)

    def __contains__(self, item: object) -> bool:
        return item in self._items

    def __iter__(self) -> Iterator[Any]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def add(self, item: Any) -> None:
        self._items[item] = None

    def discard(self, item: Any) -> None:
        self._items.pop(item, None)

    def copy(self) -> OrderedSet:
        return OrderedSet(self._items)


def state(db: Any) -> dict[str, Any]:
    return {
        "programs": list(db.programs),
        "islands": [list(island) for island in db.islands],
        "cells": [dict(grid) for grid in db.island_feature_maps],
        "archive": list(db.archive),
        "best": db.best_program_id,
        "island_best": list(db.island_best_programs),
        "generations": list(db.island_generations),
        "last_migration": db.last_migration_generation,
        "stats": {k: [v["min"], v["max"]] for k, v in db.feature_stats.items()},
    }


def scripted_run(name: str) -> dict[str, Any]:
    import openevolve.database as database
    from openevolve.config import DatabaseConfig
    from openevolve.database import Program, ProgramDatabase

    scenario = cases.SCENARIOS[name]
    config = DatabaseConfig()
    for key, value in scenario["config"].items():
        setattr(config, key, value)
    db = ProgramDatabase(config)
    db.islands = [OrderedSet() for _ in db.islands]
    db.archive = OrderedSet()
    rng = random.Random(scenario["seed"])
    database.random = rng  # type: ignore[attr-defined]

    copies: dict[str, int] = {}
    pending: list[str] = []

    class _Ids:
        @staticmethod
        def uuid4() -> str:
            return pending.pop()

    database.uuid = _Ids  # type: ignore[attr-defined]
    migrate_one = db._migrate_one

    def _migrate_one(program_id: str, target: int) -> None:
        pair = f"{program_id}>{target}"
        copies[pair] = copies.get(pair, 0) + 1
        pending[:] = [f"{pair}#{copies[pair]}"]
        migrate_one(program_id, target)
        if pending:  # skipped (no copy made): the number was not used
            copies[pair] -= 1
            pending.clear()

    db._migrate_one = _migrate_one

    tiers: list[str] = []
    names = {
        "_sample_from_island_random": "exploration",
        "_sample_from_archive_for_island": "exploitation",
        "_sample_from_island_weighted": "weighted",
        "_sample_exploration_parent": "exploration",
        "_sample_exploitation_parent": "exploitation",
        "_sample_random_parent": "random",
    }
    for method, tier in names.items():
        original = getattr(db, method)

        def wrapped(*args: Any, _original: Any = original, _tier: str = tier) -> Any:
            tiers.append(_tier)
            return _original(*args)

        setattr(db, method, wrapped)

    seed = Program(id="p0", code=cases.SEED_CODE, metrics=cases.seed_metrics(scenario))
    db.add(seed, iteration=0)
    trace: list[dict[str, Any]] = [{"state": state(db)}]
    n = scenario["num_inspirations"]
    for step in range(1, scenario["steps"] + 1):
        island = (step - 1) % len(db.islands)
        tiers.clear()
        parent, inspirations = db.sample_from_island(island, num_inspirations=n)
        code, metrics = cases.child_of(name, step, parent.id, parent.code, dict(parent.metrics))
        child = Program(
            id=f"p{step}",
            code=code,
            metrics=metrics,
            parent_id=parent.id,
            generation=parent.generation + 1,
            metadata={"island": parent.metadata.get("island")},
        )
        db.add(child, iteration=step, target_island=island)
        db.increment_island_generation(island_idx=child.metadata["island"])
        migrated = db.should_migrate()
        if migrated:
            db.migrate_programs()
        trace.append(
            {
                "island": island,
                "tier": tiers[0] if tiers else None,
                "parent": parent.id,
                "inspirations": [p.id for p in inspirations],
                "migrated": migrated,
                "state": state(db),
            }
        )
    return {"trace": trace}


def sample_frequencies(draws: int, seed: int, island: int, n: int) -> dict[str, Any]:
    """Tier and parent counts over ``draws`` calls of the reference's ``sample_from_island``,
    with its own plain sets (no substitution) and its module ``random`` seeded with ``seed``."""
    import openevolve.database as database
    from openevolve.config import DatabaseConfig
    from openevolve.database import Program, ProgramDatabase

    db = ProgramDatabase(DatabaseConfig())
    for spec in cases.fixed_population():
        program = Program(id=spec["id"], code=spec["code"], metrics=spec["metrics"])
        db.add(program, target_island=spec["island"])
    database.random = random.Random(seed)  # type: ignore[attr-defined]
    tiers: dict[str, int] = {}
    parents: dict[str, int] = {}
    names = {
        "_sample_from_island_random": "exploration",
        "_sample_from_archive_for_island": "exploitation",
        "_sample_from_island_weighted": "weighted",
    }
    seen: list[str] = []
    for method, tier in names.items():
        original = getattr(db, method)

        def wrapped(*args: Any, _original: Any = original, _tier: str = tier) -> Any:
            seen.append(_tier)
            return _original(*args)

        setattr(db, method, wrapped)
    for _ in range(draws):
        seen.clear()
        parent, _ = db.sample_from_island(island, num_inspirations=n)
        tiers[seen[0]] = tiers.get(seen[0], 0) + 1
        parents[parent.id] = parents.get(parent.id, 0) + 1
    return {"tiers": tiers, "parents": parents, "island": sorted(db.islands[island])}


def cascade(evaluator_file: str, thresholds: list[float], programs: list[str]) -> list[Any]:
    """The reference's ``Evaluator._cascade_evaluate`` on each program: its metrics and
    artifacts (the evaluator runs in this process, as the reference runs it)."""
    import asyncio
    import os
    import tempfile

    from openevolve.config import EvaluatorConfig
    from openevolve.evaluator import Evaluator

    evaluator = Evaluator(EvaluatorConfig(cascade_thresholds=thresholds), evaluator_file)
    out = []
    for code in programs:
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as handle:
            handle.write(code)
        try:
            result = asyncio.run(evaluator._cascade_evaluate(handle.name))
        finally:
            os.unlink(handle.name)
        metrics = result.metrics if hasattr(result, "metrics") else result
        artifacts = result.artifacts if hasattr(result, "artifacts") else {}
        out.append({"metrics": metrics, "artifacts": {k: str(v) for k, v in artifacts.items()}})
    return out


def diff_prompts(cases_: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The reference's diff prompt for each case, built as its parallel worker builds it: the
    parent's island ranked by ``combined_score`` (else the metric mean), the first
    ``num_top`` as previous attempts, the first ``num_top + num_diverse`` as top programs."""
    from openevolve.config import PromptConfig
    from openevolve.prompt.sampler import PromptSampler
    from openevolve.utils.metrics_utils import safe_numeric_average

    out = []
    for case in cases_:
        config = PromptConfig(
            num_top_programs=case["num_top"], num_diverse_programs=case["num_diverse"]
        )
        island = sorted(
            case["island"],
            key=lambda p: p["metrics"].get("combined_score", safe_numeric_average(p["metrics"])),
            reverse=True,
        )
        parent = case["parent"]
        prompt = PromptSampler(config).build_prompt(
            current_program=parent["code"],
            parent_program=parent["code"],
            program_metrics=parent["metrics"],
            previous_programs=island[: case["num_top"]],
            top_programs=island[: case["num_top"] + case["num_diverse"]],
            inspirations=case["inspirations"],
            language="python",
            evolution_round=case["iteration"],
            diff_based_evolution=True,
            program_artifacts=case["artifacts"] or None,
            feature_dimensions=case["dimensions"],
        )
        out.append(prompt)
    return out
