"""``galapagos run | resume | runs | show``: start, continue and inspect runs."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from harness.cli._output import (
    StoreOpt,
    err,
    fmt_score,
    guard,
    open_existing_store,
    out,
    print_json,
    state,
    store_for_listing,
    store_for_writing,
    store_hint,
)
from harness.core.errors import ConfigError

if TYPE_CHECKING:
    from harness.core.controller import Progress as RunProgress
    from harness.core.controller import RunSummary
    from harness.core.store import RunRecord
    from harness.runs import RunPlan, Services
    from harness.store.protocols import RunReader
    from harness.store.sqlite import SQLiteStore

__all__ = ["register"]

JsonOpt = Annotated[bool, typer.Option("--json", help="Print a JSON summary on stdout.")]

OFFLINE_NOTICE = (
    "LLM: the offline mutation model, NOT a language model. It perturbs numeric literals of "
    "the current program with SEARCH/REPLACE edits so the pipeline runs without an endpoint. "
    "Point at a real model with --api-base/--model or OPENAI_BASE_URL plus --model."
)


QuietOpt = Annotated[
    bool, typer.Option("--quiet", "-q", help="No progress output (errors and the summary stay).")
]
ApiBaseOpt = Annotated[
    str | None, typer.Option("--api-base", help="OpenAI-compatible endpoint URL.")
]
ModelOpt = Annotated[
    list[str] | None, typer.Option("--model", "-m", help="Model name (repeat for an ensemble).")
]


#: How the CLI names the library's settings (the flags): messages and notes name these.
FLAGS = {
    "iterations": "--iterations",
    "seed": "--seed",
    "sandbox": "--sandbox",
    "max_cost": "--max-cost",
    "max_tokens": "--max-tokens",
    "keep_going": "--keep-going",
    "api_base": "--api-base",
    "models": "--model",
    "offline": "--offline",
    "scaffold": "--scaffold",
    "set": "--set",
    "config": "--config",
    "task_config": "--task-config",
    "seed_from": "--from",
}

ExplainOpt = Annotated[
    bool,
    typer.Option(
        "--explain-config",
        help="Print the run's final config, each value with its source (scaffold, task, "
        "--config file:line, --set, a flag, default), and exit without running.",
    ),
]


def _models(model: list[str] | None) -> tuple[str, ...]:
    return tuple(name for item in (model or []) for name in item.split(",") if name.strip())


@guard
def run(
    task: Annotated[
        str | None,
        typer.Option(
            "--task",
            "-t",
            help="Task name or task folder path (default with --from: the source run's task).",
        ),
    ] = None,
    scaffold: Annotated[
        str | None,
        typer.Option("--scaffold", "-s", help="Scaffold name (see `galapagos scaffolds`)."),
    ] = None,
    iterations: Annotated[
        int | None, typer.Option("--iterations", "-i", min=0, help="LLM iterations after the seed.")
    ] = None,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Run seed (RNGs, offline model).")
    ] = None,
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="YAML config merged over the defaults.")
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Override a config key: section.key=value (repeatable)."),
    ] = None,
    api_base: ApiBaseOpt = None,
    model: ModelOpt = None,
    max_cost: Annotated[
        float | None,
        typer.Option(
            "--max-cost",
            help="Cost cap of the run in USD (llm.max_cost); refused when a model's price is "
            "unknown.",
        ),
    ] = None,
    max_tokens: Annotated[
        int | None,
        typer.Option("--max-tokens", help="Token cap of the run (llm.max_total_tokens)."),
    ] = None,
    keep_going: Annotated[
        bool,
        typer.Option(
            "--keep-going",
            help="Do not stop when the task's evaluator fails the same way on consecutive "
            "candidates (general.max_consecutive_evaluator_errors: 0).",
        ),
    ] = False,
    sandbox: Annotated[
        str | None,
        typer.Option(
            "--sandbox",
            help="docker (default) or local (host subprocesses: UNSAFE for untrusted code).",
        ),
    ] = None,
    task_config: Annotated[
        str | None,
        typer.Option(
            "--task-config",
            help="A compat task folder's config file to use (default: its config.yaml), e.g. "
            "OpenEvolve's config_phase_1.yaml.",
        ),
    ] = None,
    from_run: Annotated[
        str | None,
        typer.Option(
            "--from",
            help="RUN or RUN:PROGRAM_ID: start from this stored run's best (or that) program "
            "instead of the task's initial program.  An export folder (galapagos export): rerun "
            "the exported run as it was (its task files, scaffold, config and seed).",
        ),
    ] = None,
    offline: Annotated[
        bool,
        typer.Option(
            "--offline",
            help="Run on the offline model (a mutation operator, not an LLM) whatever endpoint "
            "and models the task folder's or your config names.",
        ),
    ] = False,
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray-address",
            envvar="GALAPAGOS_RAY_ADDRESS",
            help="Fan the run's evaluations out over this Ray cluster's nodes, each sandboxed in "
            "its node's Docker engine (needs galapagos[ray]; see docs/scale-out.md).",
        ),
    ] = None,
    explain_config: ExplainOpt = False,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Run a scaffold on a task (a compat folder without --scaffold: its own method), or rerun
    an export (--from FOLDER)."""
    from harness.runs import open_store, plan_run, seed_from_run

    models = _models(model)
    origin = None
    if from_run is not None and _is_bundle(from_run):
        from harness.export import plan_rerun

        given = {
            "--task": task, "--scaffold": scaffold, "--iterations": iterations, "--seed": seed,
            "--config": config, "--set": set_, "--max-cost": max_cost, "--max-tokens": max_tokens,
            "--keep-going": keep_going or None, "--task-config": task_config,
        }  # fmt: skip
        extra = [flag for flag, value in given.items() if value]
        if extra:
            raise ConfigError(
                f"--from {from_run} reruns an export as it was; {', '.join(extra)} would change "
                "it (only --sandbox, --api-base, --model and --store apply); to vary it, run its "
                "scaffold.yaml and config.yaml with your flags"
            )
        rerun = plan_rerun(Path(from_run), sandbox=sandbox, api_base=api_base, models=models)
        if explain_config:
            _explain(rerun, as_json)
            return
        target = store_for_writing(store)
        _drive(
            rerun,
            open_store(target),
            as_json,
            quiet=quiet,
            hint=store_hint(store),
            ray_address=ray_address,
        )
        return
    if from_run is not None:
        source_id, _, program_id = from_run.partition(":")
        source_store = open_existing_store(store)
        origin = seed_from_run(source_store, source_id, program_id or None)
        if task is None:
            source = source_store.get_run(origin.run_id)
            task = (
                source.task_path
                if source.task_path and Path(source.task_path).is_dir()
                else (source.task)
            )
    if task is None:
        raise ConfigError("no task given; pass --task NAME or a task folder (galapagos tasks)")
    plan = plan_run(
        scaffold=scaffold,
        task=task,
        seed_from=origin,
        task_config=task_config,
        config_file=config,
        overrides=list(set_ or []),
        iterations=iterations,
        seed=seed,
        api_base=api_base,
        models=models,
        sandbox=sandbox,
        offline=offline,
        max_cost=max_cost,
        max_tokens=max_tokens,
        keep_going=keep_going,
        names=FLAGS,
    )
    if explain_config:
        _explain(plan, as_json)
        return
    target = store_for_writing(store)
    _drive(
        plan,
        open_store(target),
        as_json,
        quiet=quiet,
        hint=store_hint(store),
        ray_address=ray_address,
    )


@guard
def resume(
    run_id: Annotated[str, typer.Argument(help="Run id (or a unique prefix).")],
    max_tokens: Annotated[
        int | None,
        typer.Option(
            "--max-tokens",
            help="New llm.max_total_tokens cap, above the tokens the run has used.",
        ),
    ] = None,
    max_cost: Annotated[
        float | None,
        typer.Option("--max-cost", help="New llm.max_cost cap, above the cost the run has spent."),
    ] = None,
    iterations: Annotated[
        int | None,
        typer.Option(
            "--iterations",
            "-i",
            min=1,
            help="Extend the run to this many LLM iterations in all (also a completed run).",
        ),
    ] = None,
    api_base: Annotated[
        str | None,
        typer.Option(
            "--api-base", help="Continue on this endpoint (the run's endpoint moved); recorded."
        ),
    ] = None,
    model: Annotated[
        list[str] | None,
        typer.Option("--model", "-m", help="Continue with this model (repeatable); recorded."),
    ] = None,
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray-address",
            envvar="GALAPAGOS_RAY_ADDRESS",
            help="Fan the run's evaluations out over this Ray cluster's nodes, each sandboxed in "
            "its node's Docker engine (needs galapagos[ray]; see docs/scale-out.md).",
        ),
    ] = None,
    explain_config: ExplainOpt = False,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Continue a stopped run exactly where its last committed iteration left it.

    The iterations an endpoint outage or a spent budget left without a proposal at the end
    of the run are run again, from the state before them.  A run stopped by its budget
    continues with a new cap (--max-tokens, --max-cost); the change is stored with the run
    and recorded as a budget_changed event.
    --api-base/--model continue on a moved endpoint or another model, recorded as an
    endpoint_changed event.  --iterations N extends a run (completed or not) to N iterations:
    with the offline model, the same as having asked for N from the start.
    """
    from harness.runs import check_caps, plan_resume

    check_caps(max_tokens, max_cost, FLAGS)  # bad input first, whatever the store
    st = open_existing_store(store)
    plan = plan_resume(
        st,
        run_id,
        max_total_tokens=max_tokens,
        max_cost=max_cost,
        iterations=iterations,
        api_base=api_base,
        models=_models(model),
        names=FLAGS,
    )
    if explain_config:
        _explain(plan, as_json)
        return
    _drive(plan, st, as_json, quiet=quiet, hint=store_hint(store), ray_address=ray_address)


def _is_bundle(path: str) -> bool:
    """``--from`` names an export folder (imported only then: the exporter is not light)."""
    from harness.export import is_bundle

    return is_bundle(path)


def _explain(plan: RunPlan, as_json: bool) -> None:
    """The plan's config, one ``key: value  # source`` line per leaf (``--json``: a list);
    its notes on stderr."""
    import json

    for note in plan.notes:
        err.print(f"[yellow]note:[/] {escape(note)}", soft_wrap=True)
    if as_json:
        print_json([{"key": k, "value": v, "source": src} for k, v, src in plan.sources])
        return
    for key, value, source in plan.sources:
        out.print(f"{key}: {escape(json.dumps(value))}  [dim]# {escape(source)}[/]")


def _drive(
    plan: RunPlan,
    store: SQLiteStore,
    as_json: bool,
    *,
    quiet: bool = False,
    hint: str = "",
    ray_address: str | None = None,
) -> None:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    total = plan.run.max_iterations if plan.run else plan.config.general.max_iterations
    if plan.extend_to is not None:
        total = plan.extend_to
    started = time.monotonic()
    live = err.is_terminal and not quiet
    bar = Progress(
        TextColumn("[bold]iteration"),
        MofNCompleteColumn(),
        BarColumn(),
        TextColumn("best {task.fields[best]}"),
        TextColumn("{task.fields[rate]} evals/s"),
        TextColumn("{task.fields[tokens]} tokens"),
        TimeElapsedColumn(),
        console=err,
        transient=False,
        disable=not live,
    )
    bar_task = bar.add_task("run", total=total, best="-", rate="0.0", tokens=0)

    def on_start(run: RunRecord, services: Services) -> None:
        verb = "resuming" if plan.run else "started"
        err.print(
            f"{verb} run [bold]{run.id}[/]: {run.scaffold} on {run.task}, {total} iterations",
            soft_wrap=True,
        )
        if services.llm_provider == "offline":
            err.print(f"[yellow]{OFFLINE_NOTICE}[/]", soft_wrap=True)
        else:
            err.print(f"LLM: {escape(services.llm_description)}", soft_wrap=True)
        err.print(f"sandbox: {plan.config.evaluator.sandbox}")
        for note in services.notices:
            err.print(f"[yellow]note:[/] {escape(note)}", soft_wrap=True)
        bar.start()

    def on_progress(p: RunProgress) -> None:
        elapsed = max(time.monotonic() - started, 1e-9)
        rate = f"{p.evaluations / elapsed:.2f}"
        if live:
            bar.update(
                bar_task,
                completed=p.iterations_done,
                best=fmt_score(p.best_score),
                rate=rate,
                tokens=p.tokens,
            )
        elif not quiet:  # a log file or CI: one plain line per committed iteration
            err.print(
                f"iteration {p.iterations_done}/{p.max_iterations}  best "
                f"{fmt_score(p.best_score)}  {rate} evals/s  {p.tokens} tokens  "
                f"cost {p.cost:.4f}  {elapsed:.0f}s",
                soft_wrap=True,
                highlight=False,
            )

    import asyncio

    def on_notice(text: str) -> None:
        err.print(f"[yellow]note:[/] {escape(text)}", soft_wrap=True)

    summary = asyncio.run(
        _execute_with_signals(plan, store, on_start, on_progress, on_notice, ray_address)
    )
    bar.stop()
    run = store.get_run(summary.run_id)
    data = _report(store, run, summary, as_json, hint=hint)
    store.close()
    state.exit_at_once = True  # the run's containers are gone, its store closed
    if summary.status == "interrupted":
        # Ctrl-C/SIGTERM: 130; stopped by the infrastructure (the engine stayed down): 1.
        raise typer.Exit(code=1 if run.error else 130)
    if summary.status == "failed" or _all_failed(data):
        raise typer.Exit(code=1)


def _all_failed(data: dict[str, Any]) -> bool:
    """Every LLM iteration of a run that did some failed: nothing was searched."""
    done = int(data.get("iterations_done") or 0)
    return done > 0 and int(data.get("iterations_failed") or 0) >= done


async def _execute_with_signals(
    plan: RunPlan,
    store: SQLiteStore,
    on_start: Callable[[RunRecord, Services], None],
    on_progress: Callable[[RunProgress], None],
    on_notice: Callable[[str], None],
    ray_address: str | None = None,
) -> RunSummary:
    """First Ctrl-C finishes the iterations in flight and stops; the second aborts.  With a
    Ray cluster the run's evaluations go to its nodes (a Runtime whose backend is the cluster)."""
    import asyncio

    from harness.runs import execute
    from harness.runtime import Runtime

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()

    def first() -> None:
        err.print("[yellow]stopping after the iterations in flight (Ctrl-C again to abort)[/]")
        stop.set()
        loop.remove_signal_handler(signal.SIGINT)
        loop.add_signal_handler(signal.SIGINT, _abort)

    loop.add_signal_handler(signal.SIGINT, first)
    loop.add_signal_handler(signal.SIGTERM, first)
    runtime = None
    if ray_address is not None:
        from harness.distributed.cluster import Cluster

        cluster = Cluster(ray_address)
        err.print(f"Ray cluster {ray_address}: {len(cluster.nodes)} Galapagos node(s)")
        runtime = Runtime(cluster=cluster)
    try:
        return await execute(
            plan,
            store,
            on_start=on_start,
            on_progress=on_progress,
            stop=stop,
            on_notice=on_notice,
            runtime=runtime,
        )
    finally:
        if runtime is not None:
            await runtime.aclose()
        loop.remove_signal_handler(signal.SIGINT)
        loop.remove_signal_handler(signal.SIGTERM)


def _abort() -> None:
    raise KeyboardInterrupt


def _report(
    store: RunReader, run: RunRecord, summary: RunSummary, as_json: bool, *, hint: str = ""
) -> dict[str, Any]:
    from harness.run_info import describe_run

    data = describe_run(store, run)
    stopped = summary.status == "failed" or (summary.status == "interrupted" and bool(run.error))
    if stopped:
        err.print(f"[bold red]error:[/] {escape(run.error)}", soft_wrap=True)
    # A seed failure that stopped the run is said once, by the error line.
    for line in failure_lines(data, seed=not (stopped and data.get("seed_error"))):
        err.print(f"[yellow]warning:[/] {escape(line)}", soft_wrap=True)
    if as_json:
        print_json(data)
        return data
    best = (
        f"best {fmt_score(run.best_score)} ({run.best_program_id})"
        if run.best_program_id
        else "no best program"
    )
    out.print(
        f"run {run.id}: {data['status']}, {run.iterations_done}/{run.max_iterations} iterations, "
        f"seed score {fmt_score(run.seed_score)} -> {best}, {run.tokens} tokens, "
        f"{cost_text(data)} ({data['llm']['label']})"
    )
    if run.error and summary.status not in ("failed", "interrupted"):
        err.print(f"[yellow]{escape(run.error)}[/]")
    if summary.status == "interrupted":
        err.print(f"continue with: galapagos resume {run.id}{hint}", soft_wrap=True)
    err.print(f"inspect with: galapagos show {run.id}{hint}", soft_wrap=True)
    return data


def cost_text(data: dict[str, Any]) -> str:
    """``cost 0.0123`` (USD), or what is unknown about it."""
    unknown = data["llm"]["price_unknown"]
    if unknown and not data["cost"]:
        return f"cost unknown (no price for {', '.join(unknown)})"
    text = f"cost {data['cost']:.4f}"
    return text + (f" + unknown (no price for {', '.join(unknown)})" if unknown else "")


def failure_lines(data: dict[str, Any], *, seed: bool = True) -> list[str]:
    """What went wrong in a run that still ended, one line each (empty when nothing did);
    ``seed``: include the seed's failure (off when an error line already said it)."""
    lines = []
    if seed and data.get("seed_error"):
        lines.append(f"the seed program failed to evaluate: {data['seed_error'][:300]}")
    failed = data.get("iterations_failed", 0)
    if failed:
        done = max(int(data.get("iterations_done") or 0), failed)
        why = "; ".join(
            f"{r['iterations']} x {r['outcome']}"
            + (f" (e.g. {r['example']})" if r["example"] else "")
            for r in data.get("failure_reasons", [])
        )
        lines.append(f"{failed} of {done} iterations produced no valid program: {why}")
    if data.get("iterations_not_done"):
        lines.append(
            f"{data['iterations_not_done']} of them got no proposal and count as not done: "
            f"galapagos resume {data['run_id']} runs them again"
        )
    return lines


@guard
def runs(
    store: StoreOpt = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="Newest N runs.")] = 50,
    as_json: JsonOpt = False,
) -> None:
    """List stored runs, newest first."""
    from harness.run_info import describe_run

    st = store_for_listing(store)
    rows: list[dict[str, Any]] = (
        [] if st is None else [describe_run(st, r) for r in st.list_runs(limit)]
    )
    if as_json:
        print_json(rows)
        return
    table = Table(box=None)
    longest = max((len(r["run_id"]) for r in rows), default=3)
    table.add_column("run", no_wrap=True, min_width=longest)  # ids are copied: never cut
    columns = ("scaffold", "task", "model", "status", "iter", "seed score", "best score")
    for name in (*columns, "tokens", "cost"):
        table.add_column(name, no_wrap=name in ("status", "iter"), overflow="fold")
    for r in rows:
        table.add_row(
            r["run_id"],
            r["scaffold"],
            r["task"],
            model_cell(r["llm"]),
            r["status"],
            f"{r['iterations_done']}/{r['max_iterations']}",
            fmt_score(r["seed_score"]),
            fmt_score(r["best_score"]),
            str(r["tokens"]),
            "?" if r["llm"]["price_unknown"] and not r["cost"] else f"{r['cost']:.4f}",
        )
    out.print(table)


def model_cell(llm: dict[str, Any]) -> str:
    """``gpt-4.1-mini @ api.openai.com`` or ``offline model``."""
    if llm["provider"] == "offline":
        return str(llm["label"])
    return f"{llm['label']} @ {llm['host'] or '?'}"


def register(app: typer.Typer) -> None:
    app.command("run")(run)
    app.command("resume")(resume)
    app.command("runs")(runs)
