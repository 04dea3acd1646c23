"""``galapagos bench`` and ``galapagos leaderboard``: run a benchmark matrix, read its table."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Group
from rich.live import Live
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from harness.benchmark import (
    BenchmarkSpec,
    CellState,
    curves,
    leaderboard,
    plan_benchmark,
    prepare_cells,
    resolve_benchmark,
    run_benchmark,
    split_list,
    write_csv,
)
from harness.benchmark.matrix import BenchmarkPlan
from harness.benchmark.runner import BenchmarkResult
from harness.cli._output import (
    StoreOpt,
    err,
    fmt_score,
    guard,
    open_existing_store,
    out,
    print_json,
)
from harness.runs import open_store
from harness.runtime import Runtime
from harness.store.sqlite import SQLiteStore, default_store_path

__all__ = ["register"]


@guard
def bench(
    name: Annotated[str, typer.Option("--name", help="Benchmark name (re-run it to continue).")],
    scaffolds: Annotated[
        str,
        typer.Option("--scaffolds", help="Comma-separated scaffold names or composition files."),
    ],
    tasks: Annotated[
        str, typer.Option("--tasks", help="Comma-separated task names or folders, or all.")
    ],
    seeds: Annotated[int, typer.Option("--seeds", help="Seeds per cell: 0 … K-1.")] = 1,
    iterations: Annotated[
        int, typer.Option("--iterations", "-i", help="LLM iterations per run.")
    ] = 10,
    parallel: Annotated[
        int, typer.Option("--parallel", "-p", min=1, help="Cells running at once.")
    ] = 2,
    max_containers: Annotated[
        int | None,
        typer.Option(
            "--max-containers",
            min=1,
            help="Evaluation containers running at once across all cells (default 2 per core).",
        ),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", help="YAML config merged over every cell's defaults."),
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Override a config key in every cell: section.key=value."),
    ] = None,
    api_base: Annotated[
        str | None, typer.Option("--api-base", help="OpenAI-compatible endpoint URL.")
    ] = None,
    model: Annotated[
        list[str] | None, typer.Option("--model", "-m", help="Model name (repeat for an ensemble).")
    ] = None,
    max_cost: Annotated[
        float | None, typer.Option("--max-cost", help="Cost cap of each run (llm.max_cost).")
    ] = None,
    max_tokens: Annotated[
        int | None,
        typer.Option("--max-tokens", help="Token cap of each run (llm.max_total_tokens)."),
    ] = None,
    retry_failed: Annotated[
        bool, typer.Option("--retry-failed", help="Give failed cells another go.")
    ] = False,
    store: StoreOpt = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="No live view; print the cells as JSON at the end.")
    ] = False,
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray-address",
            envvar="GALAPAGOS_RAY_ADDRESS",
            help="Run whole cells on this Ray cluster's nodes, committing to this store (needs "
            "galapagos[ray]; see docs/scale-out.md).",
        ),
    ] = None,
) -> None:
    """Run a scaffold × task × seed matrix of ordinary stored runs, tagged with the benchmark.

    Re-running the same command continues the benchmark: completed cells are skipped,
    interrupted ones resume from their last commit.  Ctrl-C stops after the iterations in
    flight (exit 130); so does a Docker engine that stays down past evaluator.engine_wait_s
    (exit 1, with the reason).  A failed cell is recorded with its reason; the others go on (exit 1
    at the end).  Read the table with galapagos leaderboard --bench NAME.
    """
    models = tuple(name for item in (model or []) for name in item.split(",") if name.strip())
    spec = BenchmarkSpec(
        name=name,
        scaffolds=tuple(split_list(scaffolds, "scaffolds")),
        tasks=tuple(split_list(tasks, "tasks")),
        seeds=seeds,
        iterations=iterations,
        config_file=config,
        overrides=tuple(set_ or []),
        api_base=api_base,
        models=models,
        max_cost=max_cost,
        max_tokens=max_tokens,
    )
    target = store or default_store_path()
    # Bad input fails before the store is created or changed.
    plan = plan_benchmark(spec, SQLiteStore(target) if target.is_file() else None)
    st = open_store(target)
    states = prepare_cells(plan, st, retry_failed=retry_failed)
    result = asyncio.run(_run(plan, st, states, parallel, max_containers, as_json, ray_address))
    if as_json:
        print_json(_summary(result))
    else:
        _print_end(result, store)
    if result.halted:  # the engine stayed down: one line, as galapagos run says it
        err.print(
            f"[bold red]error:[/] {escape(result.halted)}; the benchmark stopped: continue "
            "with the same galapagos bench command",
            soft_wrap=True,
        )
    if result.interrupted:
        raise typer.Exit(code=1 if result.halted else 130)
    if result.failed:
        raise typer.Exit(code=1)


async def _run(
    plan: BenchmarkPlan,
    store: SQLiteStore,
    states: list[CellState],
    parallel: int,
    max_containers: int | None,
    as_json: bool,
    ray_address: str | None = None,
) -> BenchmarkResult:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()

    def first() -> None:
        err.print("[yellow]stopping after the iterations in flight (Ctrl-C again to abort)[/]")
        stop.set()
        loop.remove_signal_handler(signal.SIGINT)
        loop.add_signal_handler(signal.SIGINT, _abort)

    loop.add_signal_handler(signal.SIGINT, first)
    loop.add_signal_handler(signal.SIGTERM, first)
    view = _View(plan, states, live=err.is_terminal and not as_json, quiet=as_json)
    todo = sum(1 for s in states if s.action != "skip")
    err.print(
        f"benchmark [bold]{escape(plan.name)}[/]: {len(states)} cells "
        f"({len(states) - todo} done before, {todo} to run, {parallel} at a time)"
    )
    if plan.cells and plan.cells[0].plan.config.llm.provider == "offline":
        err.print(
            "[yellow]LLM: the offline mutation model, NOT a language model: its scores "
            "measure the pipeline, not a method (see docs/benchmarking.md)[/]"
        )
    for note in plan.notes:
        err.print(f"[yellow]note:[/] {escape(note)}", soft_wrap=True)
    cluster = None
    if ray_address is not None:
        from harness.distributed.cluster import Cluster

        cluster = Cluster(ray_address)
        err.print(f"Ray cluster {ray_address}: {len(cluster.nodes)} Galapagos node(s)")
    runtime = Runtime(max_containers=max_containers, parallel=parallel, cluster=cluster)
    try:
        with view:
            return await run_benchmark(
                plan,
                store,
                states,
                parallel=parallel,
                runtime=runtime,
                stop=stop,
                on_update=view.update,
            )
    finally:
        await runtime.aclose()
        if cluster is not None:
            cluster.close()
        loop.remove_signal_handler(signal.SIGINT)
        loop.remove_signal_handler(signal.SIGTERM)


def _abort() -> None:
    raise KeyboardInterrupt


class _View:
    """The live view on a terminal; one line per finished cell elsewhere."""

    def __init__(
        self, plan: BenchmarkPlan, states: list[CellState], *, live: bool, quiet: bool
    ) -> None:
        self.plan, self.states = plan, states
        self.started = time.monotonic()
        self.quiet = quiet
        self._live = Live(self._render(), console=err, refresh_per_second=4) if live else None
        self._last = 0.0

    def __enter__(self) -> _View:
        if self._live is not None:
            self._live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.update(self._render())
            self._live.stop()

    def update(self, state: CellState) -> None:
        if self._live is not None:
            now = time.monotonic()
            if now - self._last > 0.2 or state.status != "running":
                self._last = now
                self._live.update(self._render())
        elif not self.quiet and state.status != "running":
            err.print(
                f"{state.scaffold} × {state.task} × seed {state.seed}: {state.status}, "
                f"{state.iterations_done}/{state.max_iterations} iterations, best "
                f"{fmt_score(state.best_score)}"
                + (f" ({escape(state.error[:200])})" if state.error else "")
                + f"  [{self._counts()}]",
                soft_wrap=True,
                highlight=False,
            )

    def _counts(self) -> str:
        counts: dict[str, int] = {}
        for s in self.states:
            counts[s.status] = counts.get(s.status, 0) + 1
        return ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))

    def _render(self) -> Group:
        elapsed = max(time.monotonic() - self.started, 1e-9)
        evals = sum(s.new_evaluations for s in self.states)
        tokens = sum(s.tokens for s in self.states)
        cost = sum(s.cost for s in self.states)
        head = Text(
            f"{self._counts()}  |  {evals / elapsed:.2f} evals/s  |  {tokens} tokens  |  "
            f"cost {cost:.4f}  |  {elapsed:.0f}s"
        )
        table = Table(box=None, padding=(0, 1))
        for column in ("scaffold", "task", "seed", "status", "iter", "best", "tokens"):
            table.add_column(column, no_wrap=True)
        shown = [s for s in self.states if s.status == "running"]
        shown += [s for s in self.states if s.status not in ("running", "queued")][-8:]
        for s in shown:
            table.add_row(
                s.scaffold,
                s.task,
                str(s.seed),
                s.status,
                f"{s.iterations_done}/{s.max_iterations}",
                fmt_score(s.best_score),
                str(s.tokens),
            )
        return Group(head, table)


def _summary(result: BenchmarkResult) -> dict[str, Any]:
    counts: dict[str, int] = {}
    for s in result.cells:
        counts[s.status] = counts.get(s.status, 0) + 1
    return {
        "benchmark": result.name,
        "interrupted": result.interrupted,
        "halted": result.halted,
        "status": counts,
        "wall_s": result.wall_s,
        "evaluations": sum(s.new_evaluations for s in result.cells),
        "containers_created": result.containers_created,
        "cells": [s.as_dict() for s in result.cells],
    }


def _print_end(result: BenchmarkResult, store: Path | None) -> None:
    summary = _summary(result)
    hint = f" --store {store}" if store else ""
    counts = ", ".join(f"{n} {k}" for k, n in sorted(summary["status"].items()))
    rate = summary["evaluations"] / max(result.wall_s, 1e-9)
    out.print(
        f"benchmark {result.name}: {counts}; {summary['evaluations']} evaluations in "
        f"{result.wall_s:.1f}s ({rate:.2f}/s), {result.containers_created} containers"
    )
    for cell in result.failed:
        err.print(
            f"[yellow]failed:[/] {cell.scaffold} × {cell.task} × seed {cell.seed} "
            f"({cell.run_id or 'no run'}): {escape(cell.error[:300])}",
            soft_wrap=True,
        )
    if result.interrupted and not result.halted:
        err.print("continue with the same galapagos bench command", soft_wrap=True)
    err.print(f"table: galapagos leaderboard --bench {result.name}{hint}", soft_wrap=True)


@guard
def leaderboard_cmd(
    bench_name: Annotated[
        str | None, typer.Option("--bench", help="Benchmark name (default: the newest).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the table as JSON.")] = False,
    csv_file: Annotated[
        Path | None, typer.Option("--csv", help="Also write the scaffold × task rows as CSV.")
    ] = None,
    plots: Annotated[
        Path | None,
        typer.Option("--plots", help="Write best-so-far curves and a heat map (SVG, PNG) here."),
    ] = None,
    store: StoreOpt = None,
) -> None:
    """Per scaffold × task: best, mean ± std over seeds, gap to the best known, ranks."""
    st = open_existing_store(store)
    name = resolve_benchmark(st, bench_name)
    if bench_name is None:
        err.print(f"benchmark {name} (the newest; choose one with --bench)")
    table = leaderboard(st, name)
    if csv_file is not None:
        write_csv(table, csv_file)
        err.print(f"wrote {csv_file}")
    if plots is not None:
        from harness.benchmark.plots import write_plots  # matplotlib: only when asked

        files = write_plots(table, curves(st, name), plots)
        err.print(f"wrote {len(files)} figures into {plots}")
    if as_json:
        print_json(table)
        return
    _print_table(table)


def _fmt(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}g}"


def _print_table(table: dict[str, Any]) -> None:
    t = Table(box=None, padding=(0, 1), title=f"benchmark {table['benchmark']}")
    for column in (
        "task",
        "scaffold",
        "rank",
        "best",
        "mean ± std",
        "n",
        "best known",
        "gap",
        "it→99%",
        "evals",
        "failed it/runs",
        "tokens",
        "cost",
    ):
        t.add_column(column, no_wrap=column in ("rank", "n"))
    rows = sorted(table["rows"], key=lambda r: (r["task"], r["rank"] or 1e9, r["scaffold"]))
    for r in rows:
        t.add_row(
            r["task"],
            r["scaffold"],
            str(r["rank"] or "-"),
            fmt_score(r["best"]),
            f"{_fmt(r['mean'])} ± {_fmt(r['std'], 2)}",
            f"{r['seeds']}",
            _fmt(r["best_known"]),
            "-" if r["gap"] is None else f"{100 * r['gap']:.1f}%",
            _fmt(r["iterations_to_99"], 3),
            str(r["evaluations"]),
            f"{r['failed_iterations']}/{r['failed_runs']}",
            str(r["tokens"]),
            f"{r['cost']:.4f}",
        )
    out.print(t)
    ranks = Table(box=None, padding=(0, 1), title="mean rank per scaffold")
    for column in ("scaffold", "mean rank", "tasks"):
        ranks.add_column(column)
    for s in sorted(table["scaffolds"], key=lambda s: (s["mean_rank"] or 1e9, s["scaffold"])):
        ranks.add_row(s["scaffold"], _fmt(s["mean_rank"], 3), str(s["tasks_ranked"]))
    out.print(ranks)
    counts = ", ".join(f"{n} {k}" for k, n in sorted(table["status"].items()))
    err.print(f"cells: {counts}")


def register(app: typer.Typer) -> None:
    app.command("bench")(bench)
    app.command("leaderboard")(leaderboard_cmd)
