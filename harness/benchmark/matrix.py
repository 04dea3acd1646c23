"""Planning a benchmark: the scaffold × task × seed matrix, validated before anything starts.

Every cell is planned with :func:`harness.runs.plan_run` (so an unknown scaffold or task, a
malformed ``--set`` or a bad config file fails here, as one line), and the matrix is compared
with what the store holds under the benchmark's name: the same matrix continues (completed
cells are skipped, interrupted ones resumed), a different one is a name clash.  Nothing is
written to the store until every check passed.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.core.errors import ConfigError
from harness.core.registry import list_scaffolds
from harness.evaluation.task import list_tasks
from harness.runs import RunPlan, plan_run
from harness.store.protocols import BenchmarkCell, StoreReader

__all__ = ["BenchmarkPlan", "BenchmarkSpec", "CellPlan", "plan_benchmark", "split_list"]


def split_list(value: str, what: str) -> list[str]:
    """``a,b,c`` → ``[a, b, c]`` (no empty items, no repeats)."""
    items = [item.strip() for item in value.split(",")]
    if not value.strip() or any(not item for item in items):
        raise ConfigError(f"--{what} {value!r}: give a comma-separated list without empty items")
    repeated = sorted({item for item in items if items.count(item) > 1})
    if repeated:
        raise ConfigError(f"--{what} names {', '.join(repeated)} more than once")
    return items


@dataclass(frozen=True)
class BenchmarkSpec:
    """What ``galapagos bench`` was asked for."""

    name: str
    scaffolds: tuple[str, ...]
    #: Task names or folders; ``("all",)``: every shipped task.
    tasks: tuple[str, ...]
    seeds: int
    iterations: int
    config_file: Path | None = None
    overrides: tuple[str, ...] = ()
    api_base: str | None = None
    models: tuple[str, ...] = ()
    max_cost: float | None = None
    max_tokens: int | None = None


@dataclass(frozen=True)
class CellPlan:
    scaffold: str
    task: str
    seed: int
    position: int
    plan: RunPlan


@dataclass(frozen=True)
class BenchmarkPlan:
    name: str
    matrix: dict[str, Any]
    cells: tuple[CellPlan, ...]
    #: Whether the store already holds this benchmark (a re-run continues it).
    exists: bool = False
    notes: tuple[str, ...] = field(default_factory=tuple)


def _check_name(name: str) -> None:
    if not name.strip() or len(name) > 100 or any(c in name for c in "\n\r\t"):
        raise ConfigError(f"--name {name!r}: give a short name on one line (up to 100 chars)")


def _budget_overrides(spec: BenchmarkSpec) -> list[str]:
    out = []
    if spec.max_cost is not None:
        if not spec.max_cost > 0:
            raise ConfigError(f"--max-cost {spec.max_cost}: give a cost above 0 (per run)")
        out.append(f"llm.max_cost={spec.max_cost!r}")
    if spec.max_tokens is not None:
        if spec.max_tokens <= 0:
            raise ConfigError(f"--max-tokens {spec.max_tokens}: give a number of tokens above 0")
        out.append(f"llm.max_total_tokens={spec.max_tokens}")
    return out


def _file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


#: How ``galapagos bench`` names the settings its runs are planned with (messages name these).
_FLAGS = {"set": "--set", "config": "--config", "api_base": "--api-base", "models": "--model",
          "iterations": "--iterations", "seed": "--seeds"}  # fmt: skip


def plan_benchmark(spec: BenchmarkSpec, store: StoreReader | None) -> BenchmarkPlan:
    """Plan every cell and check the name against the store (see the module docstring);
    ``store`` None: no store exists yet (nothing can clash)."""
    _check_name(spec.name)
    if spec.seeds < 1:
        raise ConfigError(f"--seeds {spec.seeds}: give at least 1")
    if spec.iterations < 0:
        raise ConfigError(f"--iterations {spec.iterations}: give 0 or more")
    tasks = list(spec.tasks)
    if tasks == ["all"]:
        tasks = list_tasks()
        if not tasks:
            raise ConfigError("--tasks all: no tasks found (see galapagos tasks)")
    elif "all" in tasks:
        raise ConfigError("--tasks all cannot be combined with task names")
    _check_known(spec.scaffolds, tasks)
    overrides = [*spec.overrides, *_budget_overrides(spec)]
    cells: list[CellPlan] = []
    scaffold_ids: dict[str, str] = {}
    task_ids: dict[str, str] = {}
    for scaffold in spec.scaffolds:
        for task in tasks:
            for seed in range(spec.seeds):
                plan = plan_run(
                    scaffold=scaffold,
                    task=task,
                    config_file=spec.config_file,
                    overrides=list(overrides),
                    iterations=spec.iterations,
                    seed=seed,
                    api_base=spec.api_base,
                    models=spec.models,
                    names=_FLAGS,
                )
                name, task_name = plan.spec.name, plan.task.name
                if scaffold_ids.setdefault(name, scaffold) != scaffold:
                    raise ConfigError(
                        f"--scaffolds: {scaffold_ids[name]} and {scaffold} are both "
                        f"scaffold {name!r}; name each once"
                    )
                if task_ids.setdefault(task_name, task) != task:
                    raise ConfigError(
                        f"--tasks: {task_ids[task_name]} and {task} are both task "
                        f"{task_name!r}; name each once"
                    )
                cells.append(CellPlan(name, task_name, seed, len(cells), plan))
    matrix = _matrix(spec, cells, overrides)
    stored = store.benchmarks.benchmark(spec.name) if store is not None else None
    if store is not None and stored is not None and stored != matrix:
        differ = sorted(k for k in {*stored, *matrix} if stored.get(k) != matrix.get(k))
        raise ConfigError(
            f"benchmark {spec.name!r} already exists in {store.path} with a different matrix "
            f"({', '.join(differ)} differ); choose another --name, or repeat its command to "
            "continue it (galapagos leaderboard --bench NAME --json shows its matrix)"
        )
    notes = sorted({note for cell in cells for note in cell.plan.notes})
    return BenchmarkPlan(spec.name, matrix, tuple(cells), stored is not None, tuple(notes))


def _check_known(scaffolds: tuple[str, ...], tasks: list[str]) -> None:
    """Unknown names, all of them in one line (a path must exist)."""
    known_scaffolds, known_tasks = list_scaffolds(), list_tasks()
    bad_s = [s for s in scaffolds if s not in known_scaffolds and not Path(s).is_file()]
    bad_t = [t for t in tasks if t not in known_tasks and not Path(t).is_dir()]
    problems = []
    if bad_s:
        problems.append(
            f"unknown scaffold(s) {', '.join(bad_s)} (valid: {', '.join(known_scaffolds)}, "
            "or the path of a composition file)"
        )
    if bad_t:
        problems.append(
            f"unknown task(s) {', '.join(bad_t)} (valid: {', '.join(known_tasks)}, all, or a "
            "task folder)"
        )
    if problems:
        raise ConfigError("; ".join(problems))


def _matrix(spec: BenchmarkSpec, cells: list[CellPlan], overrides: list[str]) -> dict[str, Any]:
    """What identifies a benchmark: its cells and everything that configures their runs."""
    scaffolds = list(dict.fromkeys(c.scaffold for c in cells))
    tasks = list(dict.fromkeys(c.task for c in cells))
    compositions = {
        cell.scaffold: _file_digest(Path(given))
        for cell, given in zip(cells[:: len(tasks) * spec.seeds], spec.scaffolds, strict=True)
        if Path(given).is_file()
    }
    llm = cells[0].plan.config.llm if cells else None
    return {
        "scaffolds": scaffolds,
        "tasks": tasks,
        "seeds": list(range(spec.seeds)),
        "iterations": spec.iterations,
        "compositions": compositions,
        "config_file": _file_digest(spec.config_file) if spec.config_file else None,
        "overrides": overrides,
        "llm": {
            "provider": llm.provider if llm else None,
            "api_base": llm.api_base if llm else None,
            "models": [m.name for m in llm.models] if llm else [],
        },
    }


def empty_cells(plan: BenchmarkPlan) -> list[BenchmarkCell]:
    return [BenchmarkCell(plan.name, c.scaffold, c.task, c.seed, c.position) for c in plan.cells]
