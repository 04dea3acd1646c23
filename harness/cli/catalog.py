"""``galapagos scaffolds``, ``galapagos blocks`` and ``galapagos tasks``: what can be run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from harness.cli._output import StoreOpt, fmt_score, guard, out, print_json, store_for_listing
from harness.core.config import SLOTS
from harness.core.errors import ConfigError, HarnessError
from harness.core.registry import get_spec, list_blocks, list_scaffolds
from harness.core.store import RunRecord
from harness.evaluation.task import list_tasks, load_task, tasks_root
from harness.provenance import run_llm
from harness.store.protocols import RunReader

__all__ = ["register"]

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON on stdout.")]


@guard
def scaffolds(as_json: JsonOpt = False) -> None:
    """List the shipped scaffolds and their compositions of six named blocks."""
    rows: list[dict[str, Any]] = []
    for name in list_scaffolds():
        spec = get_spec(name, checked=False)  # names only: no block module is imported
        rows.append({**spec.describe(), "card": str(spec.folder / "README.md")})
    if as_json:
        print_json(rows)
        return
    table = Table("scaffold", "summary", "blocks", box=None)
    for row in rows:
        blocks = " + ".join(row["composition"][slot] for slot in SLOTS)
        table.add_row(row["name"], row["summary"], blocks)
    out.print(table)


@guard
def blocks(
    slot: Annotated[
        str | None, typer.Option("--slot", help=f"Only this slot ({', '.join(SLOTS)}).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """List the named blocks per slot: what a composition (--scaffold FILE) can use."""
    if slot is not None and slot not in SLOTS:
        raise ConfigError(f"--slot {slot!r}: not a slot; valid slots: {', '.join(SLOTS)}")
    specs = [s for s in list_blocks() if slot is None or s.slot == slot]
    specs.sort(key=lambda s: (SLOTS.index(s.slot), s.name))
    if as_json:
        print_json([s.describe() for s in specs])
        return
    table = Table("slot", "block", "summary", "needs", box=None)
    for spec in specs:
        needs = "; ".join(
            f"{other}: {', '.join(sorted(caps))}" for other, caps in spec.requires.items()
        )
        table.add_row(spec.slot, spec.name, spec.summary, needs or "-")
    out.print(table)


@guard
def tasks(store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """List the tasks: shipped, from GALAPAGOS_TASKS, and every other task a stored run used,
    with the objective, the best-known value and the best stored run (its model named)."""
    st = store_for_listing(store)
    runs = st.list_runs() if st is not None else []
    rows: list[dict[str, Any]] = []
    shipped = set(list_tasks(tasks_root()))
    try:
        for name in list_tasks():
            source = "shipped" if name in shipped else "GALAPAGOS_TASKS"
            rows.append(_task_row(st, name, name, source, [r for r in runs if r.task == name]))
        known = {row["name"] for row in rows}
        by_path: dict[tuple[str, str], list[RunRecord]] = {}
        for run in runs:
            if run.task not in known:
                by_path.setdefault((run.task, run.task_path or run.task), []).append(run)
        for (name, path), members in sorted(by_path.items()):
            source = path if Path(path).is_dir() else f"{path} (folder gone)"
            rows.append(_task_row(st, name, path, source, members))
    finally:
        if st is not None:
            st.close()
    if as_json:
        print_json(rows)
        return
    table = Table(box=None)
    longest = max((len(r["name"]) for r in rows), default=4)
    table.add_column("task", no_wrap=True, min_width=longest)  # names are typed: never cut
    table.add_column("from", overflow="fold")
    table.add_column("objective", overflow="fold", ratio=1)
    table.add_column("best known value", overflow="fold")
    table.add_column("best stored value", overflow="fold")
    table.add_column("its score", overflow="fold")
    table.add_column("model", overflow="fold")
    ids = [r.get("best_stored_run") or "" for r in rows]
    table.add_column("best run", no_wrap=True, min_width=max((len(x) for x in ids), default=3))
    for row in rows:
        if "error" in row:
            table.add_row(row["name"], row["source"], f"[red]{escape(row['error'])}[/]")
            continue
        table.add_row(
            row["name"],
            escape(row["source"]),
            escape(row["objective"] or "-"),
            fmt_score(row["best_known"]),
            fmt_score(row["best_stored_value"]),
            fmt_score(row["best_stored_score"]),
            escape(row["best_stored_model"] or "-"),
            row["best_stored_run"] or "-",
        )
    out.print(table)


def _task_row(
    st: RunReader | None, name: str, ref: str, source: str, runs: list[RunRecord]
) -> dict[str, Any]:
    """One task: its card (or why it does not load) and its best stored run.  A failed run's
    score is its failure, not a result: it is never the best stored."""
    row: dict[str, Any] = {"name": name, "source": source}
    try:
        card = load_task(ref).card
    except HarnessError as exc:
        card = None
        if not runs:
            return {**row, "error": str(exc)}
    known = card.best_known if card else None
    scored = [r for r in runs if r.best_score is not None and r.status != "failed"]
    best = max(scored, key=lambda r: (r.best_score, r.created_at), default=None)
    value = None
    if st is not None and best is not None and card and card.metric and best.best_program_id:
        program = st.program(best.id, best.best_program_id)
        value = program.metrics.get(card.metric) if program else None
    llm = run_llm(best.config) if best is not None else None
    return {
        **row,
        "objective": card.objective if card else None,
        "direction": card.direction if card else None,
        "best_known": known.value if known else None,
        "best_known_source": known.source if known else None,
        "best_known_combined_score": known.combined_score if known else None,
        "stored_runs": len(runs),
        "best_stored_score": best.best_score if best else None,
        "best_stored_run": best.id if best else None,
        "best_stored_value": value,
        "best_stored_model": llm["label"] if llm else None,
        "best_stored_llm": llm,
    }


def register(app: typer.Typer) -> None:
    app.command("scaffolds")(scaffolds)
    app.command("blocks")(blocks)
    app.command("tasks")(tasks)
