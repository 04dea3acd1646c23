"""The leaderboard of a benchmark: per scaffold × task, statistics over seeds, ranks.

Everything is read from the store (the benchmark's cells and their ordinary runs), so the table
of a benchmark is the same whoever computes it (``galapagos leaderboard``, the hub) and two
benchmarks whose runs are identical give identical tables.  Per scaffold × task:

- ``best``: the highest best score over seeds; ``mean`` ± ``std``: over seeds (sample standard
  deviation; 0 for one seed); ``seeds``: runs with a score (``complete``: of those, completed).
  A failed run (its seed could not be evaluated, its task broke) has no score here: it counts
  in ``failed_runs``; a run stopped by its budget keeps the best it reached;
- ``best_known``: the task card's best-known value on the score scale; ``gap``: the normalised
  gap of the mean to it, ``(best_known - mean) / |best_known|`` (0: matches it, < 0: beats it);
- ``iterations_to_99``: mean over seeds of the first iteration whose best-so-far is within 1 %
  of that run's final best (``best >= final - 0.01·|final|``);
- ``evaluations``, ``failed_iterations`` (iterations that produced no valid program),
  ``failed_runs`` (failed or out of budget), ``tokens``, ``cost``: sums over seeds;
- ``rank``: per task, by mean (1 = best; ties, also within 1e-9 relative, share the lower
  rank); each scaffold's
  ``mean_rank`` is over the tasks where it has a rank.
"""

from __future__ import annotations

import csv
import math
import statistics
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from harness.core.errors import ConfigError, HarnessError
from harness.evaluation.task import load_task
from harness.runs import failure_summary, run_status
from harness.store.sqlite import SQLiteStore

__all__ = ["best_so_far", "curves", "leaderboard", "resolve_benchmark", "write_csv"]

ROW_FIELDS = (
    "scaffold task seeds complete best mean std best_known gap iterations_to_99 evaluations "
    "failed_iterations failed_runs tokens cost rank"
).split()


def resolve_benchmark(store: SQLiteStore, name: str | None) -> str:
    """``name``, checked; without one, the newest benchmark."""
    known = [n for n, _, _ in store.benchmarks()]
    if name is None:
        if not known:
            raise ConfigError(
                f"no benchmark in {store.path}; run one with galapagos bench --name NAME …"
            )
        return known[0]
    if name not in known:
        listed = ", ".join(known[:10]) or "none"
        raise ConfigError(f"no benchmark {name!r} in {store.path} (benchmarks: {listed})")
    return name


def best_so_far(history: Iterable[tuple[int, float | None]], iterations: int) -> list[float | None]:
    """Best score after each iteration 0..``iterations`` (carried over iterations that failed)."""
    by_iteration = dict(history)
    out: list[float | None] = []
    current: float | None = None
    for i in range(iterations + 1):
        value = by_iteration.get(i)
        if value is not None and (current is None or value > current):
            current = value
        out.append(current)
    return out


def _iterations_to_99(history: list[tuple[int, float | None]]) -> int | None:
    values = [(i, v) for i, v in history if v is not None]
    if not values:
        return None
    final = max(v for _, v in values)
    target = final - 0.01 * abs(final)
    return next(i for i, v in values if v >= target)


def _best_known(task: str, task_path: str) -> float | None:
    try:
        card = load_task(task_path if task_path and Path(task_path).is_dir() else task).card
    except HarnessError:
        return None
    known = card.best_known
    return known.combined_score if known is not None else None


def _cell_rows(store: SQLiteStore, name: str) -> list[dict[str, Any]]:
    rows = []
    for cell in store.benchmark_cells(name):
        row: dict[str, Any] = {
            "scaffold": cell.scaffold,
            "task": cell.task,
            "seed": cell.seed,
            "run_id": None,
            "status": "failed" if cell.error else "queued",
            "error": cell.error,
            "iterations_done": 0,
            "max_iterations": None,
            "seed_score": None,
            "best_score": None,
            "evaluations": 0,
            "failed_iterations": 0,
            "iterations_to_99": None,
            "tokens": 0,
            "cost": 0.0,
            "task_path": "",
        }
        run = None
        if cell.run_id:
            try:
                run = store.get_run(cell.run_id)
            except HarnessError:
                run = None
        if run is not None:
            history = store.score_history(run.id)
            row.update(
                run_id=run.id,
                status=run_status(run),
                error=run.error,
                iterations_done=run.iterations_done,
                max_iterations=run.max_iterations,
                seed_score=run.seed_score,
                best_score=run.best_score,
                evaluations=store.evaluation_count(run.id),
                failed_iterations=failure_summary(store, run.id)["iterations_failed"],
                iterations_to_99=_iterations_to_99(history),
                tokens=run.tokens,
                cost=run.cost,
                task_path=run.task_path,
            )
        rows.append(row)
    return rows


def _aggregate(
    scaffold: str, task: str, cells: list[dict[str, Any]], known: float | None
) -> dict[str, Any]:
    # A failed run's score is the failure's 0, not a result: it counts in ``failed_runs``.
    scored = [c for c in cells if c["best_score"] is not None and c["status"] != "failed"]
    values = [float(c["best_score"]) for c in scored]
    mean = statistics.fmean(values) if values else None
    to99 = [c["iterations_to_99"] for c in scored if c["iterations_to_99"] is not None]
    gap = None
    if mean is not None and known is not None and known != 0:
        gap = (known - mean) / abs(known)
    return {
        "scaffold": scaffold,
        "task": task,
        "seeds": len(values),
        "complete": sum(1 for c in scored if c["status"] == "completed"),
        "best": max(values) if values else None,
        "mean": mean,
        "std": statistics.stdev(values) if len(values) > 1 else (0.0 if values else None),
        "best_known": known,
        "gap": gap,
        "iterations_to_99": statistics.fmean(to99) if to99 else None,
        "evaluations": sum(c["evaluations"] for c in cells),
        "failed_iterations": sum(c["failed_iterations"] for c in cells),
        "failed_runs": sum(1 for c in cells if c["status"] in ("failed", "budget_exhausted")),
        "tokens": sum(c["tokens"] for c in cells),
        "cost": sum(c["cost"] for c in cells),
        "rank": None,
    }


def _rank(rows: list[dict[str, Any]]) -> None:
    for task in dict.fromkeys(r["task"] for r in rows):
        ranked = sorted(
            (r for r in rows if r["task"] == task and r["mean"] is not None),
            key=lambda r: -r["mean"],
        )
        for r in ranked:
            r["rank"] = 1 + sum(1 for other in ranked if _above(other["mean"], r["mean"]))


def _above(a: float, b: float) -> bool:
    """``a`` beats ``b`` by more than float noise (1e-9 relative): means that differ only in
    their last digits are ties, not ranks."""
    return a - b > 1e-9 * max(1.0, abs(a), abs(b))


def leaderboard(store: SQLiteStore, name: str) -> dict[str, Any]:
    """The benchmark's table (see the module docstring), its cells and its matrix."""
    matrix = store.benchmark(name)
    if matrix is None:
        raise ConfigError(f"no benchmark {name!r} in {store.path}")
    cells = _cell_rows(store, name)
    known: dict[str, float | None] = {}
    for cell in cells:
        if cell["task"] not in known:
            known[cell["task"]] = _best_known(cell["task"], cell["task_path"])
    rows = []
    for scaffold in matrix["scaffolds"]:
        for task in matrix["tasks"]:
            mine = [c for c in cells if c["scaffold"] == scaffold and c["task"] == task]
            rows.append(_aggregate(scaffold, task, mine, known.get(task)))
    _rank(rows)
    scaffolds = []
    for scaffold in matrix["scaffolds"]:
        ranks = [r["rank"] for r in rows if r["scaffold"] == scaffold and r["rank"] is not None]
        scaffolds.append(
            {
                "scaffold": scaffold,
                "mean_rank": statistics.fmean(ranks) if ranks else None,
                "tasks_ranked": len(ranks),
            }
        )
    for cell in cells:
        del cell["task_path"]
    status_counts: dict[str, int] = {}
    for cell in cells:
        status_counts[cell["status"]] = status_counts.get(cell["status"], 0) + 1
    return {
        "benchmark": name,
        "matrix": matrix,
        "status": status_counts,
        "rows": rows,
        "scaffolds": scaffolds,
        "cells": cells,
    }


def curves(store: SQLiteStore, name: str) -> dict[str, dict[str, list[list[float | None]]]]:
    """Best-so-far per iteration for every run: ``{task: {scaffold: [per seed]}}``."""
    matrix = store.benchmark(name) or {}
    out: dict[str, dict[str, list[list[float | None]]]] = {}
    for cell in store.benchmark_cells(name):
        if not cell.run_id:
            continue
        try:
            run = store.get_run(cell.run_id)
        except HarnessError:
            continue
        total = int(matrix.get("iterations") or run.max_iterations)
        series = best_so_far(store.score_history(run.id), total)
        out.setdefault(cell.task, {}).setdefault(cell.scaffold, []).append(series)
    return out


def write_csv(table: dict[str, Any], path: Path) -> None:
    """The scaffold × task rows as CSV (one line per row, the JSON's field names)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=ROW_FIELDS)
            writer.writeheader()
            for row in table["rows"]:
                writer.writerow({k: _csv_value(row[k]) for k in ROW_FIELDS})
    except OSError as exc:
        raise ConfigError(f"--csv {path}: cannot write it ({exc.strerror or exc})") from exc


def _csv_value(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return ""
    return "" if value is None else value
