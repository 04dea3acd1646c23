"""``galapagos show`` (every part of a stored run, each with ``--json``) and ``galapagos export``
(a run as a folder of files)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from rich.markup import escape
from rich.syntax import Syntax
from rich.table import Table

from harness.cli._output import (
    StoreOpt,
    err,
    fmt_score,
    guard,
    open_existing_store,
    out,
    print_json,
)
from harness.cli.runs import cost_text, failure_lines, model_cell
from harness.core.errors import ConfigError
from harness.core.scoring import improves
from harness.core.store import RunRecord
from harness.report import (
    EVENT_GROUPS,
    failures,
    lineage,
    llm_usage,
    program_rows,
    prompts,
    run_events,
)
from harness.runs import describe_run, run_status
from harness.store.protocols import RunReader

__all__ = ["register"]

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON on stdout.")]
View = Literal[
    "all", "code", "history", "usage", "programs", "lineage", "events", "prompts", "config",
    "failures",
]  # fmt: skip


@guard
def show(
    run_id: Annotated[str, typer.Argument(help="Run id (or a unique prefix).")],
    what: Annotated[
        View,
        typer.Option(
            "--only",
            help="One part: code (plain source of the best program), history, usage, programs, "
            "lineage, events, prompts, config, failures.",
        ),
    ] = "all",
    kind: Annotated[
        list[str] | None,
        typer.Option(
            "--kind",
            help="With --only events: only these kinds, or groups "
            f"({', '.join(EVENT_GROUPS)}); repeatable.",
        ),
    ] = None,
    iteration: Annotated[
        int | None,
        typer.Option("--iteration", help="With --only prompts: only this iteration's calls."),
    ] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show a run: summary, best program, score history, LLM usage; or one part with --only."""
    st = open_existing_store(store)
    run = st.get_run(run_id)
    if what == "all":
        _all(st, run, as_json)
        return
    data: Any
    if what == "code":
        data = _best(st, run)
        if data is None:
            raise ConfigError(f"run {run.id} has no program yet")
        if not as_json:
            sys.stdout.write(data["code"])  # plain source: `show --only code > best.py` runs
            return
    elif what == "history":
        data = [{"iteration": i, "best_score": s} for i, s in st.score_history(run.id)]
    elif what == "usage":
        data = llm_usage(st, run)
    elif what == "programs":
        data = program_rows(st, run)
    elif what == "lineage":
        data = lineage(st, run)
    elif what == "events":
        data = run_events(st, run, kind or ())
    elif what == "prompts":
        data = prompts(st, run, iteration)
    elif what == "config":
        data = dict(run.config)
    else:
        data = failures(st, run)
    if as_json:
        print_json(data)
        return
    _RENDER[what](run, data)


def _best(st: RunReader, run: RunRecord) -> dict[str, Any] | None:
    programs = {p.id: p for p in st.programs(run.id)}
    best = programs.get(run.best_program_id or "")
    if best is None:
        return None
    return {
        "id": best.id,
        "iteration": best.iteration,
        "metrics": dict(best.metrics),
        "parent_id": best.parent_id,
        "language": best.language,
        "code": best.code,
    }


def _all(st: RunReader, run: RunRecord, as_json: bool) -> None:
    summary = describe_run(st, run)
    best = _best(st, run)
    history = st.score_history(run.id)
    usage = llm_usage(st, run)
    if as_json:
        summary["best_program"] = best
        summary["score_history"] = [{"iteration": i, "best_score": s} for i, s in history]
        summary["llm_usage"] = usage
        print_json(summary)
        return
    out.print(
        f"[bold]{run.id}[/]  {run.scaffold} on {run.task}  status {run_status(run)}  "
        f"{run.iterations_done}/{run.max_iterations} iterations"
    )
    out.print(f"seed score {fmt_score(run.seed_score)}  best score {fmt_score(run.best_score)}")
    llm = summary["llm"]
    where = f" via {llm['provider']} ({escape(str(llm['endpoint']))})" if llm["endpoint"] else ""
    out.print(f"model {escape(model_cell(llm))}{where}  {run.tokens} tokens  {cost_text(summary)}")
    if run.error:
        out.print(f"[yellow]{escape(run.error)}[/]")
    for line in failure_lines(summary):
        out.print(escape(line))
    for event in st.events(run.id, ["variation_operators"]):
        source = event.payload.get("source", "?")
        why = f" ({event.payload['error']})" if event.payload.get("error") else ""
        out.print(f"variation operators: {source}{escape(why)}")
        for key in ("diverge", "refine"):
            text = str(event.payload.get(key) or "")
            ideas = text.partition("Ideas for this problem:\n")[2] if text else ""
            if ideas:
                out.print(f"  {key.upper()} ideas: " + escape(" ".join(ideas.split())[:300]))
    _history(run, [{"iteration": i, "best_score": s} for i, s in history])
    _usage(run, usage, per_iteration=False)
    if best is not None:
        metrics = ", ".join(f"{k}={v}" for k, v in best["metrics"].items())
        out.print(f"best program {best['id']} (iteration {best['iteration']}): {metrics}")
        out.print(Syntax(best["code"], best["language"] or "python", line_numbers=True))
    out.print(
        "[dim]more: --only programs | lineage | events | prompts | config | failures; "
        f"export with: galapagos export {run.id}[/]"
    )


def _history(run: RunRecord, data: list[dict[str, Any]]) -> None:
    general = run.config.get("general") or {}
    margin = {
        "rtol": float(general.get("improvement_rtol", 1e-12)),
        "atol": float(general.get("improvement_atol", 1e-15)),
    }
    table = Table("iteration", "best score", box=None, title="score history (improvements)")
    last = None
    for row in data:
        score = row["best_score"]
        if score is not None and improves(score, last, **margin):
            table.add_row(str(row["iteration"]), fmt_score(score))
            last = score
    out.print(table)


def _usage(run: RunRecord, usage: dict[str, Any], *, per_iteration: bool = True) -> None:
    for key, title in (("by_model", "model"), ("by_purpose", "purpose")):
        table = Table(
            title, "calls", "ok", "prompt tok", "completion tok", "cost", "mean s",
            box=None, title=f"LLM usage by {title}",
        )  # fmt: skip
        for m in usage.get(key, []):
            table.add_row(
                escape(str(m[title])),
                str(m["calls"]),
                str(m["ok"]),
                str(m["prompt_tokens"]),
                str(m["completion_tokens"]),
                _cost(m["cost"], usage, m.get("model")),
                f"{m['mean_latency_s'] or 0:.3f}",
            )
        out.print(table)
    rows = usage.get("by_iteration", [])
    if rows and per_iteration:
        table = Table(
            "iteration", "calls", "tokens", "cost", box=None, title="LLM cost by iteration"
        )
        for row in rows:
            table.add_row(
                str(row["iteration"]),
                str(row["calls"]),
                str(row["tokens"]),
                _cost(row["cost"], usage),
            )
        out.print(table)
    elif rows:
        costs = [row["cost"] for row in rows]
        top = max(rows, key=lambda row: row["cost"])
        out.print(
            f"cost per iteration: mean {sum(costs) / len(costs):.4f}, most {top['cost']:.4f} "
            f"(iteration {top['iteration']}); all: --only usage"
        )
    if usage.get("price_unknown"):
        out.print(
            f"[yellow]price unknown for {escape(', '.join(usage['price_unknown']))}: their "
            "calls cost 0 above; give llm.models[].input_cost_per_mtok/output_cost_per_mtok[/]"
        )
    elif usage.get("price_table"):
        out.print(f"[dim]prices (USD per million tokens) from the price table reviewed "
                  f"{escape(str(usage['price_table']))}[/]")  # fmt: skip


def _cost(value: float | None, usage: dict[str, Any], model: str | None = None) -> str:
    unknown = usage.get("price_unknown") or []
    if model is not None and model in unknown:
        return "?"
    return f"{value or 0:.4f}"


def _programs(run: RunRecord, data: list[dict[str, Any]]) -> None:
    table = Table("program", "iteration", "parent", "score", "generation", "note", box=None)
    for row in data:
        note = []
        if row["best"]:
            note.append("best")
        if row["metadata"].get("copy_of"):
            note.append(f"copy of {row['metadata']['copy_of']}")
        if "island" in row["metadata"]:
            note.append(f"island {row['metadata']['island']}")
        table.add_row(
            row["id"],
            str(row["iteration"]),
            row["parent_id"] or "-",
            fmt_score(row["score"]),
            str(row["generation"]),
            ", ".join(note),
        )
    out.print(table)


def _lineage(run: RunRecord, data: dict[str, Any]) -> None:
    stack = [(node, 0) for node in reversed(data["roots"])]
    while stack:  # depth-first, iterative (lineages can be very deep)
        node, depth = stack.pop()
        copy = f" (copy of {node['copy_of']})" if node.get("copy_of") else ""
        star = " *" if node["id"] == (run.best_program_id or "") else ""
        out.print(
            f"{'  ' * min(depth, 40)}{node['id']}  it {node['iteration']}  "
            f"{fmt_score(node['score'])}{copy}{star}",
            highlight=False,
        )
        stack.extend((child, depth + 1) for child in reversed(node["children"]))
    out.print(f"best ancestry: {' <- '.join(data['best_ancestry']) or '-'}")


def _events(run: RunRecord, data: list[dict[str, Any]]) -> None:
    for event in data:
        rest = {k: v for k, v in event.items() if k not in ("iteration", "kind")}
        detail = ", ".join(f"{k}={v}" for k, v in rest.items())
        out.print(f"{event['iteration']:>5}  {event['kind']:<22} {escape(detail)[:300]}")


def _prompts(run: RunRecord, data: list[dict[str, Any]]) -> None:
    for call in data:
        status = "ok" if call["ok"] else f"failed: {call['error']}"
        out.print(
            f"[bold]iteration {call['iteration']} attempt {call['attempt']} "
            f"({escape(call['purpose'])}, {escape(str(call['model']))}, {status})[/]"
        )
        out.print("[dim]--- prompt ---[/]")
        out.print(escape(call["prompt"] or "(not stored: general.log_prompts was off)"))
        out.print("[dim]--- response ---[/]")
        out.print(escape(call["response"] or ""))


def _config(run: RunRecord, data: dict[str, Any]) -> None:
    import yaml

    out.print(escape(yaml.safe_dump(data, sort_keys=False)), highlight=False)


def _failures(run: RunRecord, data: list[dict[str, Any]]) -> None:
    if not data:
        out.print("no failed iteration")
    for row in data:
        for attempt in row["attempts"]:
            status = f" ({attempt['status']})" if attempt.get("status") else ""
            error = " ".join(str(attempt["error"]).split())[:300]
            out.print(
                f"iteration {row['iteration']} attempt {attempt['attempt']}: "
                f"{attempt['outcome']}{status}: {escape(error)}"
            )


_RENDER: dict[str, Callable[[RunRecord, Any], None]] = {
    "history": _history,
    "usage": _usage,
    "programs": _programs,
    "lineage": _lineage,
    "events": _events,
    "prompts": _prompts,
    "config": _config,
    "failures": _failures,
}


@guard
def export(
    run_id: Annotated[str, typer.Argument(help="Run id (or a unique prefix).")],
    out_dir: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Folder to write (default: galapagos_output/RUN_ID)."),
    ] = None,
    with_prompts: Annotated[
        bool, typer.Option("--prompts", help="Also write every prompt and response.")
    ] = False,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Write a run to a folder that reruns on its own: best/best_program.py and its info, every
    program, the lineage, the events (and prompts with --prompts), the task files, the composed
    scaffold and resolved config, versions, and a README with the command that reruns it
    (galapagos run --from FOLDER)."""
    from harness.export import export_bundle

    st = open_existing_store(store)
    run = st.get_run(run_id)
    target = out_dir or Path("galapagos_output") / run.id
    written = export_bundle(st, run, target, with_prompts=with_prompts)
    if written["note"]:
        err.print(f"[yellow]note:[/] {escape(written['note'])}", soft_wrap=True)
    if as_json:
        print_json(written)
        return
    best = f"best program {written['best_program']}, " if written["best_program"] else ""
    out.print(f"exported run {run.id} to {target}: {best}{len(written['files'])} files")
    err.print(f"rerun it with: galapagos run --from {target}", soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("show")(show)
    app.command("export")(export)
