"""``galapagos scaffolds``, ``galapagos blocks`` and ``galapagos tasks``: what can be run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from harness.cli._output import StoreOpt, fmt_score, guard, out, print_json, store_for_listing
from harness.core.config import SLOTS
from harness.core.errors import ConfigError, HarnessError
from harness.core.registry import get_spec, list_blocks, list_scaffolds
from harness.evaluation.task import list_tasks, load_task

__all__ = ["register"]

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON on stdout.")]


@guard
def scaffolds(as_json: JsonOpt = False) -> None:
    """List the shipped scaffolds and their compositions of six named blocks."""
    rows: list[dict[str, Any]] = []
    for name in list_scaffolds():
        spec = get_spec(name)
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
    """List the shipped tasks: objective, best-known value, best score any stored run reached."""
    best, best_run = _stored_bests(store)
    rows: list[dict[str, Any]] = []
    for name in list_tasks():
        try:
            card = load_task(name).card
        except HarnessError as exc:
            rows.append({"name": name, "error": str(exc)})
            continue
        known = card.best_known
        stored_score, stored_metrics = best.get(name, (None, {}))
        rows.append(
            {
                "name": name,
                "objective": card.objective,
                "direction": card.direction,
                "best_known": known.value if known else None,
                "best_known_source": known.source if known else None,
                "best_known_combined_score": known.combined_score if known else None,
                "best_stored_score": stored_score,
                "best_stored_run": best_run.get(name),
                "best_stored_value": stored_metrics.get(card.metric) if card.metric else None,
            }
        )
    if as_json:
        print_json(rows)
        return
    table = Table(box=None)
    longest = max((len(r["name"]) for r in rows), default=4)
    table.add_column("task", no_wrap=True, min_width=longest)  # names are typed: never cut
    table.add_column("objective", overflow="fold", ratio=1)
    table.add_column("best known value", overflow="fold")
    table.add_column("best stored value", overflow="fold")
    table.add_column("its combined_score", overflow="fold")
    runs = [r.get("best_stored_run") or "" for r in rows]
    table.add_column("best run", no_wrap=True, min_width=max((len(x) for x in runs), default=3))
    for row in rows:
        if "error" in row:
            table.add_row(row["name"], f"[red]{row['error']}[/]", "", "", "", "")
            continue
        table.add_row(
            row["name"],
            row["objective"],
            fmt_score(row["best_known"]),
            fmt_score(row["best_stored_value"]),
            fmt_score(row["best_stored_score"]),
            row["best_stored_run"] or "-",
        )
    out.print(table)


def _stored_bests(
    store: Path | None,
) -> tuple[dict[str, tuple[float, dict[str, Any]]], dict[str, str]]:
    """Per task: the best stored score with its program's metrics, and the run that reached it.

    A store that does not exist yet (named or default) only means no run has been made yet.
    """
    st = store_for_listing(store)
    if st is None:
        return {}, {}
    try:
        best = st.best_by_task()
        run_ids: dict[str, str] = {}
        for run in st.list_runs():  # newest first: of tied runs, the newest is named
            if run.best_score is not None and run.best_score == best.get(run.task, (None,))[0]:
                run_ids.setdefault(run.task, run.id)
    finally:
        st.close()
    return best, run_ids


def register(app: typer.Typer) -> None:
    app.command("scaffolds")(scaffolds)
    app.command("blocks")(blocks)
    app.command("tasks")(tasks)
