"""Root typer app: registers the per-noun sub-apps and maps harness errors to exit codes."""

from __future__ import annotations

import sys

import typer

from harness.cli import sandbox as sandbox_cmd
from harness.cli import strategy as strategy_cmd
from harness.cli import task as task_cmd

app = typer.Typer(
    name="galapagos",
    help="LLM-driven program search; every untrusted program runs in a locked-down container.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=False,
)
app.add_typer(sandbox_cmd.app, name="sandbox")
app.add_typer(task_cmd.app, name="task")
app.add_typer(strategy_cmd.app, name="strategy")


def main() -> None:
    app(prog_name="galapagos")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
