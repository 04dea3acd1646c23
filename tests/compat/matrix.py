"""The compat matrix: the peers' own task folders (``tests/data/peers``, listed with their status
in ``manifest.yaml``) run offline, each with the scaffold its authors meant.

A cell is one folder: ``galapagos run --task FOLDER --scaffold S --offline -i 3`` (the folder's
own config file, or the one the manifest names), here as library calls on one shared runtime
(one Docker backend and warm pool, canaries once) so the matrix costs evaluations, not
start-ups.  :func:`run_cells` returns what each run did; ``tests/compat/test_matrix.py`` asserts
it, ``bench/compat_matrix.py`` prints it, and ``render.py`` turns the manifest (and the figures a
heavy run recorded) into ``docs/compat.md``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
PEERS = ROOT / "tests" / "data" / "peers"
MANIFEST = PEERS / "manifest.yaml"
HEAVY_RESULTS = PEERS / "heavy_results.json"
ITERATIONS = 3
#: Statuses of folders kept as test data.
COPIED = ("run", "heavy", "refused", "image")


@dataclass(frozen=True)
class Cell:
    repo: str
    path: str
    scaffold: str
    status: str
    reason: str = ""
    config: str | None = None
    #: What a refused cell's error must say (a regular expression).
    expect: str = ""
    #: The on-demand image an ``image`` cell runs in.
    image: str = ""
    note: str = ""

    @property
    def name(self) -> str:
        return f"{self.repo}/{self.path}"

    @property
    def folder(self) -> Path:
        return PEERS / self.repo / self.path


@dataclass
class Outcome:
    """What one cell's run did."""

    cell: Cell
    status: str = ""
    iterations: int = 0
    seed_score: float | None = None
    best_score: float | None = None
    evaluations: int = 0
    failed_iterations: int = 0
    #: LLM calls the run made (none when it stopped before the loop).
    llm_calls: int = 0
    error: str = ""
    wall_s: float = 0.0
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "folder": self.cell.name,
            "scaffold": self.cell.scaffold,
            "status": self.status,
            "iterations": self.iterations,
            "seed_score": self.seed_score,
            "best_score": self.best_score,
            "evaluations": self.evaluations,
            "failed_iterations": self.failed_iterations,
            "error": self.error,
            "wall_s": round(self.wall_s, 1),
        }


def manifest() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(MANIFEST.read_text())
    return data


def cells(statuses: Iterable[str] | None = None) -> list[Cell]:
    wanted = set(statuses) if statuses is not None else None
    out = []
    for entry in manifest()["folders"]:
        cell = Cell(
            repo=entry["repo"],
            path=entry["path"],
            scaffold=entry["scaffold"],
            status=entry["status"],
            reason=entry.get("reason", ""),
            config=entry.get("config"),
            expect=entry.get("expect", ""),
            image=entry.get("image", ""),
            note=entry.get("note", ""),
        )
        if wanted is None or cell.status in wanted:
            out.append(cell)
    return out


async def run_cell(cell: Cell, store: Any, runtime: Any, *, seed: int = 0) -> Outcome:
    """One folder, offline, ``ITERATIONS`` iterations, with its authors' scaffold."""
    from harness.core.errors import HarnessError
    from harness.runs import execute, plan_run

    outcome = Outcome(cell)
    started = time.monotonic()
    try:
        plan = plan_run(
            scaffold=cell.scaffold,
            task=str(cell.folder),
            task_config=cell.config,
            iterations=ITERATIONS,
            seed=seed,
            offline=True,
        )
        outcome.notes = list(plan.notes)
        summary = await execute(plan, store, runtime=runtime)
    except HarnessError as exc:
        outcome.status, outcome.error = "error", str(exc)
        outcome.wall_s = time.monotonic() - started
        return outcome
    run = store.get_run(summary.run_id)
    outcome.status = summary.status
    outcome.iterations = summary.iterations_done
    outcome.seed_score = summary.seed_score
    outcome.best_score = summary.best_score
    outcome.error = run.error
    outcome.evaluations = store.evaluation_count(summary.run_id)
    outcome.llm_calls = len(store.llm_exchanges(summary.run_id))
    outcome.failed_iterations = sum(
        1 for e in store.events(summary.run_id, ["iteration_failed"]) if e.iteration > 0
    )
    outcome.wall_s = time.monotonic() - started
    return outcome


async def run_cells(
    chosen: list[Cell], store: Any, *, parallel: int = 2, seed: int = 0
) -> list[Outcome]:
    """Every cell on one shared runtime, ``parallel`` at a time."""
    from harness.runtime import Runtime

    runtime = Runtime(max_containers=parallel + 1, parallel=parallel)
    queue: asyncio.Queue[Cell] = asyncio.Queue()
    for cell in chosen:
        queue.put_nowait(cell)
    results: dict[str, Outcome] = {}

    async def worker() -> None:
        while not queue.empty():
            cell = queue.get_nowait()
            results[cell.name] = await run_cell(cell, store, runtime, seed=seed)

    try:
        await asyncio.gather(*(worker() for _ in range(max(1, parallel))))
    finally:
        await runtime.aclose()
    return [results[cell.name] for cell in chosen]
