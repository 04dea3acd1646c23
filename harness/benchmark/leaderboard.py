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
- ``ci_low``/``ci_high``: the 95 % percentile bootstrap interval of the mean over seeds;
- ``best_raw``/``mean_raw``: the same on the task card's raw ``metric`` (its ``direction``:
  the best raw value is the smallest for a minimisation), read from each run's best program;
- ``rank``: per task, 1 + the number of scaffolds whose interval lies wholly above this one's:
  scaffolds whose intervals overlap tie (:mod:`harness.benchmark.stats`); each scaffold's
  ``mean_rank`` is over the tasks where it has a rank.

The table carries its ``provenance``: the model, provider and endpoint host of its runs (never
several models pooled in one table: a benchmark is one endpoint configuration), iterations,
seeds, each task's content hash, the Galapagos version (and commit) that made the runs, and for
the offline model a loud "not a method result"; ``provenance["line"]`` is the caption every
format prints.
"""

from __future__ import annotations

import csv
import math
import statistics
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from harness.benchmark.stats import RANK_RULE, bootstrap_ci, rank_by_intervals
from harness.core.errors import ConfigError, HarnessError
from harness.core.scoring import improves
from harness.evaluation.task import load_task
from harness.provenance import OFFLINE_LABEL, run_llm
from harness.runs import failure_summary, run_status
from harness.store.protocols import StoreReader

__all__ = ["best_so_far", "curves", "leaderboard", "resolve_benchmark", "write_csv"]

ROW_FIELDS = (
    "scaffold task seeds complete best mean std ci_low ci_high raw_metric direction best_raw "
    "mean_raw best_known gap iterations_to_99 evaluations failed_iterations failed_runs tokens "
    "cost rank"
).split()
#: Provenance columns of every CSV row (the CSV is read without its caption).
PROVENANCE_FIELDS = (
    "model provider endpoint_host iterations seeds_planned task_hash galapagos_version note"
).split()
OFFLINE_NOTE = (
    "offline model — NOT a method result (a literal-perturbing operator, not an LLM: its "
    "numbers measure the pipeline, see docs/benchmarking.md)"
)


def resolve_benchmark(store: StoreReader, name: str | None) -> str:
    """``name``, checked; without one, the newest benchmark."""
    known = [n for n, _, _ in store.benchmarks.benchmarks()]
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
        if value is not None and improves(value, current):  # the runs' own margin
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


def _card(task: str, task_path: str) -> dict[str, Any]:
    """What the table needs of a task's card: best known (score scale), raw metric, direction."""
    try:
        card = load_task(task_path if task_path and Path(task_path).is_dir() else task).card
    except HarnessError:
        return {"best_known": None, "metric": None, "direction": "maximize"}
    known = card.best_known
    return {
        "best_known": known.combined_score if known is not None else None,
        "metric": card.metric,
        "direction": card.direction,
    }


def _cell_rows(store: StoreReader, name: str) -> list[dict[str, Any]]:
    rows = []
    for cell in store.benchmarks.benchmark_cells(name):
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
            "task_hash": "",
            "best_metrics": {},
            "llm": None,
            "made_by": None,
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
                task_hash=run.task_hash,
                best_metrics=_best_metrics(store, run.id, run.best_program_id),
                llm=run_llm(run.config),
                made_by=_made_by(store, run.id),
            )
        rows.append(row)
    return rows


def _best_metrics(store: StoreReader, run_id: str, program_id: str | None) -> dict[str, Any]:
    program = store.program(run_id, program_id) if program_id else None
    return dict(program.metrics) if program is not None else {}


def _made_by(store: StoreReader, run_id: str) -> str | None:
    """The Galapagos version (and commit) that started the run (``None``: not recorded)."""
    events = store.events(run_id, ["run_started"])
    if not events:
        return None
    payload = events[0].payload
    commit = payload.get("commit")
    return f"{payload.get('galapagos')}" + (f" ({str(commit)[:10]})" if commit else "")


def _stats(values: list[float]) -> dict[str, Any]:
    """Best, mean, spread and bootstrap interval of the seeds' scores (None without any)."""
    if not values:
        return {"best": None, "mean": None, "std": None, "ci_low": None, "ci_high": None}
    low, high = bootstrap_ci(values)
    return {
        "best": max(values),
        "mean": statistics.fmean(values),
        "std": statistics.stdev(values) if len(values) > 1 else 0.0,
        "ci_low": low,
        "ci_high": high,
    }


def _raw_metric(scored: list[dict[str, Any]], card: dict[str, Any]) -> dict[str, Any]:
    """The card's own metric (in its own direction) over the scored seeds."""
    metric = card["metric"]
    raws = [
        float(c["best_metrics"][metric])
        for c in scored
        if metric and isinstance(c["best_metrics"].get(metric), int | float)
    ]
    pick = min if card["direction"] == "minimize" else max
    return {
        "raw_metric": metric,
        "direction": card["direction"],
        "best_raw": pick(raws) if raws else None,
        "mean_raw": statistics.fmean(raws) if raws else None,
    }


def _gap(mean: float | None, known: float | None) -> float | None:
    if mean is None or known is None or known == 0:
        return None
    return (known - mean) / abs(known)


def _aggregate(
    scaffold: str, task: str, cells: list[dict[str, Any]], card: dict[str, Any]
) -> dict[str, Any]:
    # A failed run's score is the failure's 0, not a result: it counts in ``failed_runs``.
    scored = [c for c in cells if c["best_score"] is not None and c["status"] != "failed"]
    values = [float(c["best_score"]) for c in scored]
    stats = _stats(values)
    to99 = [c["iterations_to_99"] for c in scored if c["iterations_to_99"] is not None]
    return {
        "scaffold": scaffold,
        "task": task,
        "seeds": len(values),
        "complete": sum(1 for c in scored if c["status"] == "completed"),
        **stats,
        **_raw_metric(scored, card),
        "best_known": card["best_known"],
        "gap": _gap(stats["mean"], card["best_known"]),
        "iterations_to_99": statistics.fmean(to99) if to99 else None,
        "evaluations": sum(c["evaluations"] for c in cells),
        "failed_iterations": sum(c["failed_iterations"] for c in cells),
        "failed_runs": sum(1 for c in cells if c["status"] in ("failed", "budget_exhausted")),
        "tokens": sum(c["tokens"] for c in cells),
        "cost": sum(c["cost"] for c in cells),
        "rank": None,
    }


def _llm_identity(
    cells: list[dict[str, Any]], planned: dict[str, Any]
) -> tuple[str, list[str], str, str | None, list[str]]:
    """(label, models, provider, host, the distinct model labels) of the cells' runs, or of
    what the matrix asked for when no run exists yet."""
    llms = [c["llm"] for c in cells if c["llm"]]
    mixed = sorted({f"{x['label']} @ {x['host']}" if x["host"] else x["label"] for x in llms})
    if not llms:
        models = list(planned.get("models") or [])
        provider = "offline" if planned.get("provider") == "offline" else "openai-compatible"
        label = OFFLINE_LABEL if provider == "offline" else " + ".join(models)
        return label, models, provider, None, mixed
    first = llms[0]
    models = list(dict.fromkeys(m for x in llms for m in x["models"]))
    label = first["label"]
    if len(mixed) > 1:  # a cell resumed elsewhere: say so, never pass it off as one model
        label = "MIXED MODELS (" + "; ".join(mixed) + ")"
    return label, models, first["provider"], first["host"], mixed


def _task_versions(cells: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Each task's distinct content hashes (8 characters) over the cells, in first-seen order."""
    tasks: dict[str, list[str]] = {}
    for cell in cells:
        if cell["task_hash"]:
            hashes = tasks.setdefault(cell["task"], [])
            if cell["task_hash"][:8] not in hashes:
                hashes.append(cell["task_hash"][:8])
    return tasks


def provenance(name: str, matrix: dict[str, Any], cells: list[dict[str, Any]]) -> dict[str, Any]:
    """What produced the table's numbers (see the module docstring), with its caption line."""
    label, models, provider, host, mixed = _llm_identity(cells, matrix.get("llm") or {})
    offline = provider == "offline" and len(mixed) <= 1
    some_offline = any(c["llm"]["provider"] == "offline" for c in cells if c["llm"])
    tasks = _task_versions(cells)
    made_by = sorted({c["made_by"] for c in cells if c["made_by"]})
    seeds, iterations = len(matrix.get("seeds") or []), int(matrix.get("iterations") or 0)
    if offline:
        who = OFFLINE_NOTE
    elif len(mixed) > 1:
        who = f"model {label}" + (f"; some cells: {OFFLINE_NOTE}" if some_offline else "")
    else:
        who = f"model {label} via {provider}" + (f" ({host})" if host else "")
    versions = ", ".join(f"{t}@{'/'.join(h)}" for t, h in tasks.items()) or "no run yet"
    line = (
        f"benchmark {name}: {who}; {seeds} seed{'s' if seeds != 1 else ''} × {iterations} "
        f"iterations; tasks {versions}; Galapagos {', '.join(made_by) or 'version not recorded'}"
        f"; {RANK_RULE}"
    )
    return {
        "benchmark": name,
        "offline": offline,
        "note": OFFLINE_NOTE if offline or some_offline else "",
        "model": label,
        "models": models,
        "provider": provider,
        "endpoint_host": host,
        "iterations": iterations,
        "seeds": seeds,
        "task_hashes": tasks,
        "galapagos": made_by,
        "rank_rule": RANK_RULE,
        "line": line,
    }


def leaderboard(store: StoreReader, name: str) -> dict[str, Any]:
    """The benchmark's table (see the module docstring), its cells and its matrix."""
    matrix = store.benchmarks.benchmark(name)
    if matrix is None:
        raise ConfigError(f"no benchmark {name!r} in {store.path}")
    cells = _cell_rows(store, name)
    cards: dict[str, dict[str, Any]] = {}
    for cell in cells:
        if cell["task"] not in cards:
            cards[cell["task"]] = _card(cell["task"], cell["task_path"])
    rows = []
    for scaffold in matrix["scaffolds"]:
        for task in matrix["tasks"]:
            mine = [c for c in cells if c["scaffold"] == scaffold and c["task"] == task]
            card = cards.get(task) or {"best_known": None, "metric": None, "direction": "maximize"}
            rows.append(_aggregate(scaffold, task, mine, card))
    rank_by_intervals(rows)
    source = provenance(name, matrix, cells)
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
        for key in ("task_path", "best_metrics", "llm", "made_by"):
            del cell[key]
    status_counts: dict[str, int] = {}
    for cell in cells:
        status_counts[cell["status"]] = status_counts.get(cell["status"], 0) + 1
    return {
        "benchmark": name,
        "provenance": source,
        "matrix": matrix,
        "status": status_counts,
        "rows": rows,
        "scaffolds": scaffolds,
        "cells": cells,
    }


def curves(store: StoreReader, name: str) -> dict[str, dict[str, list[list[float | None]]]]:
    """Best-so-far per iteration for every run: ``{task: {scaffold: [per seed]}}``."""
    matrix = store.benchmarks.benchmark(name) or {}
    out: dict[str, dict[str, list[list[float | None]]]] = {}
    for cell in store.benchmarks.benchmark_cells(name):
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
    """The scaffold × task rows as CSV (see :func:`csv_text`)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(csv_text(table), encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"--csv {path}: cannot write it ({exc.strerror or exc})") from exc


def csv_text(table: dict[str, Any]) -> str:
    """One line per scaffold × task row (the JSON's field names), each with the provenance
    columns, so a row read alone still says what produced it."""
    import io

    source = table["provenance"]
    fixed = {
        "model": source["model"],
        "provider": source["provider"],
        "endpoint_host": source["endpoint_host"],
        "iterations": source["iterations"],
        "seeds_planned": source["seeds"],
        "galapagos_version": "; ".join(source["galapagos"]),
        "note": source["note"],
    }
    buffer = io.StringIO()
    writer = csv.DictWriter(
        buffer, fieldnames=[*ROW_FIELDS, *PROVENANCE_FIELDS], lineterminator="\n"
    )
    writer.writeheader()
    for row in table["rows"]:
        hashes = "/".join(source["task_hashes"].get(row["task"], []))
        writer.writerow(
            {
                **{k: _csv_value(row[k]) for k in ROW_FIELDS},
                **{k: _csv_value(v) for k, v in fixed.items()},
                "task_hash": hashes,
            }
        )
    return buffer.getvalue()


def _csv_value(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return ""
    return "" if value is None else value
