"""Read models built from the store: what both the API and the pages show."""

from __future__ import annotations

import difflib
from collections import defaultdict
from typing import Any

from harness.core.errors import RunNotFound
from harness.core.records import Program
from harness.core.redact import redact_text
from harness.core.store import RunRecord
from harness.provenance import run_llm
from harness.runs import describe_run, run_status
from harness.service.schemas import finite
from harness.store.protocols import RunReader, StoreReader

__all__ = [
    "ACTIVE",
    "benchmark_board",
    "benchmarks",
    "diff_lines",
    "leaderboard_rows",
    "lineage",
    "program_detail",
    "program_summary",
    "redacted",
    "run_view",
]

#: Statuses of a run that is not over yet.
ACTIVE = ("queued", "running")


def redacted(value: Any) -> Any:
    """``value`` with every URL in its strings redacted (an endpoint's credentials in an
    error message, an event, a stored config), however deep."""
    if isinstance(value, str):
        return redact_text(value) if "://" in value else value
    if isinstance(value, dict):
        return {k: redacted(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redacted(v) for v in value]
    return value


def run_view(store: RunReader, run: RunRecord) -> dict[str, Any]:
    data: dict[str, Any] = redacted(finite(describe_run(store, run)))
    return data


def program_summary(p: Program) -> dict[str, Any]:
    return finite(
        {
            "id": p.id,
            "iteration": p.iteration,
            "parent_id": p.parent_id,
            "score": p.score,
            "generation": p.generation,
            "metrics": dict(p.metrics),
        }
    )


def diff_text(parent: Program | None, child: Program) -> str:
    if parent is None:
        return ""
    return "".join(
        difflib.unified_diff(
            parent.code.splitlines(keepends=True),
            child.code.splitlines(keepends=True),
            fromfile=f"{parent.id}",
            tofile=f"{child.id}",
        )
    )


def diff_lines(diff: str) -> list[tuple[str, str]]:
    """(css class, line) for rendering a unified diff as escaped text."""
    out = []
    for line in diff.splitlines():
        if line.startswith(("+++", "---")):
            kind = "meta"
        elif line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "del"
        else:
            kind = "ctx"
        out.append((kind, line))
    return out


def program_detail(store: RunReader, run: RunRecord, program_id: str) -> dict[str, Any]:
    program = store.program(run.id, program_id)
    if program is None:
        raise RunNotFound(f"run {run.id} has no program {program_id!r}")
    parent = store.program(run.id, program.parent_id) if program.parent_id else None
    calls = [
        c
        for c in store.llm_calls(run.id)
        if c["iteration"] == program.iteration and program.iteration > 0
    ]
    evaluations = [
        {
            "iteration": e["iteration"],
            "attempt": e["attempt"],
            "status": e["status"],
            "duration_s": e["duration_s"],
            "result": e["result"],
        }
        for e in store.program_evaluations(run.id, program.id)
    ]
    return finite(
        {
            **program_summary(program),
            "code": program.code,
            "language": program.language,
            "changes": program.changes,
            "parent_label": program.parent_label,
            "inspiration_ids": list(program.inspiration_ids),
            "metadata": dict(program.metadata),
            "artifacts": dict(program.artifacts),
            "evaluations": evaluations,
            "diff": diff_text(parent, program),
            "children": [c.id for c in store.children(run.id, program.id)],
            "llm_calls": [redacted({**c, "ok": bool(c["ok"])}) for c in calls],
        }
    )


def lineage(store: RunReader, run: RunRecord) -> dict[str, Any]:
    """Every program ever admitted (evicted ones too: the store keeps them) with its parent."""
    programs = store.programs(run.id)
    nodes = [{**program_summary(p), "best": p.id == run.best_program_id} for p in programs]
    for node in nodes:
        node.pop("metrics", None)
    return finite({"run_id": run.id, "nodes": nodes, "best_so_far": store.score_history(run.id)})


def benchmarks(store: StoreReader) -> list[dict[str, Any]]:
    """Every stored benchmark (``galapagos bench``), newest first, with its cells' progress."""
    out = []
    for name, matrix, created_at in store.benchmarks.benchmarks():
        cells = store.benchmarks.benchmark_cells(name)
        with_run = [c.run_id for c in cells if c.run_id]
        completed = 0
        for run_id in with_run:
            try:
                completed += store.get_run(run_id).status == "completed"
            except RunNotFound:
                continue
        out.append(
            {
                "name": name,
                "created_at": created_at,
                "scaffolds": list(matrix.get("scaffolds", [])),
                "tasks": list(matrix.get("tasks", [])),
                "seeds": len(matrix.get("seeds", [])),
                "iterations": int(matrix.get("iterations", 0)),
                "cells": len(cells),
                "runs": len(with_run),
                "completed": completed,
            }
        )
    return out


def benchmark_board(store: StoreReader, name: str | None, task: str | None) -> dict[str, Any]:
    """The leaderboard of benchmark ``name`` (default: the newest), the library's table
    (:func:`harness.benchmark.leaderboard`), optionally one task's rows and cells only.
    Raises :class:`~harness.core.errors.ConfigError` for an unknown benchmark."""
    from harness.benchmark import leaderboard, resolve_benchmark

    if name is None and not store.benchmarks.benchmarks():
        return {
            "benchmark": None,
            "source": "no benchmark stored yet (galapagos bench)",
            "rows": [],
            "scaffolds": [],
            "cells": [],
        }
    chosen = resolve_benchmark(store, name)
    table = leaderboard(store, chosen)
    rows, cells = table["rows"], table["cells"]
    if task is not None:
        rows = [r for r in rows if r["task"] == task]
        cells = [c for c in cells if c["task"] == task]
    return finite(
        {
            "benchmark": chosen,
            "source": f"benchmark {chosen}: per scaffold x task, statistics over seeds",
            "provenance": table["provenance"],
            "rows": rows,
            "scaffolds": table["scaffolds"],
            "cells": cells,
        }
    )


def leaderboard_rows(
    store: RunReader, runs: list[RunRecord], *, pool_models: bool = False
) -> list[dict[str, Any]]:
    """Task × scaffold × model of loose runs (not in a benchmark): runs, completed runs, best
    and mean best score, tokens, cost.  Runs of different models are never one row unless
    ``pool_models``; a failed run's score is its failure, not a result (counted, never best)."""
    groups: dict[tuple[str, str, str], list[RunRecord]] = defaultdict(list)
    for run in runs:
        llm = run_llm(run.config)
        model = (
            "all models"
            if pool_models
            else f"{llm['label']}" + (f" @ {llm['host']}" if llm["host"] else "")
        )
        groups[(run.task, run.scaffold, model)].append(run)
    rows: list[dict[str, Any]] = []
    for (task, scaffold, model), members in sorted(groups.items()):
        scored = [r for r in members if r.best_score is not None and run_status(r) != "failed"]
        best = max(scored, key=lambda r: r.best_score or 0.0, default=None)
        mean = sum(r.best_score or 0.0 for r in scored) / len(scored) if scored else None
        rows.append(
            {
                "task": task,
                "scaffold": scaffold,
                "model": model,
                "runs": len(members),
                "failed": sum(1 for r in members if run_status(r) == "failed"),
                "completed": sum(1 for r in members if r.status == "completed"),
                "best_score": best.best_score if best else None,
                "mean_best_score": mean,
                "best_run": best.id if best else None,
                "tokens": sum(r.tokens for r in members),
                "cost": sum(r.cost for r in members),
            }
        )
    rows.sort(key=lambda r: (r["task"], r["best_score"] is None, -float(r["best_score"] or 0.0)))
    return finite(rows)
