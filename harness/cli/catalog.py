"""``galapagos scaffolds`` and ``galapagos tasks``: what can be run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from harness.cli._output import fmt_score, guard, out, print_json
from harness.core.errors import HarnessError
from harness.core.registry import get_spec, list_scaffolds
from harness.evaluation.task import list_tasks, load_task
from harness.store.sqlite import SQLiteStore, default_store_path

__all__ = ["register"]

StoreOpt = Annotated[
    Path | None,
    typer.Option("--store", help="Run store (SQLite file).", envvar="GALAPAGOS_STORE"),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON on stdout.")]


@guard
def scaffolds(as_json: JsonOpt = False) -> None:
    """List the shipped scaffolds."""
    rows = []
    for name in list_scaffolds():
        spec = get_spec(name)
        rows.append({"name": name, "summary": spec.summary, "card": str(spec.folder / "README.md")})
    if as_json:
        print_json(rows)
        return
    table = Table("scaffold", "summary", box=None)
    for row in rows:
        table.add_row(row["name"], row["summary"])
    out.print(table)


@guard
def tasks(store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """List the shipped tasks: objective, best-known value, best score any stored run reached."""
    path = store or default_store_path()
    best = SQLiteStore(path).best_by_task() if path.exists() else {}
    rows = []
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
                "best_stored_value": stored_metrics.get(card.metric) if card.metric else None,
            }
        )
    if as_json:
        print_json(rows)
        return
    table = Table(
        "task", "objective", "best known", "best stored value", "(combined_score)", box=None
    )
    for row in rows:
        if "error" in row:
            table.add_row(row["name"], f"[red]{row['error']}[/]", "", "", "")
            continue
        table.add_row(
            row["name"],
            row["objective"],
            fmt_score(row["best_known"]),
            fmt_score(row["best_stored_value"]),
            fmt_score(row["best_stored_score"]),
        )
    out.print(table)


def register(app: typer.Typer) -> None:
    app.command("scaffolds")(scaffolds)
    app.command("tasks")(tasks)
