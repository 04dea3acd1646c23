"""Drive any scaffold offline and in-process: the offline model without HTTP, a regex scorer
instead of a sandboxed task, EvoX strategies in local subprocesses.  Used by the conformance
suite; nothing here is a stand-in for Docker in a test about the sandbox."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.core.config import GeneralConfig
from harness.core.controller import Controller, Progress
from harness.core.evaluator import BaseEvaluator
from harness.core.records import Program, TaskInfo
from harness.core.registry import BuildEnv, build_scaffold, load_config
from harness.core.scaffold import Scaffold
from harness.core.store import RunRecord
from harness.sandbox.sessions import LocalSessions
from harness.store.sqlite import SQLiteStore
from tests.evox.fakes import SEED_PROGRAM, OfflineChat, RegexEvaluator
from tests.fakes import SimpleMeter

#: Per-scaffold settings that make the short run exercise the scaffold's machinery.
OVERRIDES: dict[str, list[str]] = {
    "evox": [  # every step stagnates: strategies switch at iterations 2, 4, 6, 8
        "memory.switch_interval=2",
        "memory.improvement_threshold=100",
        "memory.validation.stress_programs=50",
        "memory.validation.stress_every=10",
    ],
    "openevolve": [  # two islands migrating every two generations: migrants within 10 steps
        "population.num_islands=2",
        "population.migration_interval=2",
    ],
    "adaevolve": [  # stagnation on every check: spawns, migrations and paradigms early
        "selection_policy.spawn_productivity_threshold=1.5",
        "selection_policy.spawn_cooldown_iterations=3",
        "selection_policy.migration_interval=4",
        "memory.paradigm_window_size=3",
        "memory.paradigm_improvement_threshold=1.5",
    ],
}


@dataclass
class Built:
    controller: Controller
    scaffold: Scaffold
    store: SQLiteStore


def build(
    name: str,
    store_path: Path,
    *,
    iterations: int,
    run_id: str = "conf",
    create: bool = True,
    overrides: list[str] | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    evaluator: BaseEvaluator | None = None,
    model: OfflineChat | None = None,
) -> Built:
    spec, config = load_config(
        name,
        overrides=[
            f"general.max_iterations={iterations}",
            *OVERRIDES.get(spec_name(name), []),
            *(overrides or []),
        ],
    )
    env = BuildEnv(
        seed=config.seed,
        evaluator=evaluator or RegexEvaluator(),
        task=TaskInfo(name="toy", description="Make score as large as possible."),
        run_id=run_id,
        sessions=LocalSessions(),  # EvoX strategies as host subprocesses (trusted fixtures)
    )
    scaffold = build_scaffold(spec, config, env)
    store = SQLiteStore(store_path)
    run = RunRecord(
        id=run_id,
        scaffold=spec.name,
        task="toy",
        task_path="",
        config=config.model_dump(mode="json"),
        seed=config.seed,
        max_iterations=iterations,
    )
    if create:
        store.create_run(run)
    else:
        run = store.get_run(run_id)
    meter = SimpleMeter()
    controller = Controller(
        scaffold,
        store=store,
        run=run,
        model=model or OfflineChat(seed=config.seed),
        meter=meter,
        general=GeneralConfig(**config.general.model_dump()),
        seed_code=SEED_PROGRAM,
        on_progress=on_progress,
    )
    return Built(controller, scaffold, store)


def spec_name(name: str) -> str:
    return Path(name).stem if name.endswith((".yaml", ".yml")) else name


async def drive(built: Built) -> None:
    try:
        await built.controller.run_to_end()
    finally:
        await built.scaffold.aclose()


def run(built: Built) -> None:
    asyncio.run(drive(built))


def lineage(store: SQLiteStore, run_id: str = "conf") -> list[dict[str, Any]]:
    """Every stored program with what identifies its place in the search."""
    return [_key(p) for p in store.programs(run_id)]


def _key(p: Program) -> dict[str, Any]:
    return {
        "id": p.id,
        "iteration": p.iteration,
        "parent": p.parent_id,
        "inspirations": list(p.inspiration_ids),
        "label": p.parent_label,
        "score": p.score,
        "code": p.code,
        "metadata": dict(p.metadata),
    }
