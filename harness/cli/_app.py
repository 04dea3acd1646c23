"""Root typer app: registers the per-noun sub-apps and the global ``--debug`` flag."""

from __future__ import annotations

from typing import Annotated

import typer

from harness.cli import catalog, runs
from harness.cli import sandbox as sandbox_cmd
from harness.cli import strategy as strategy_cmd
from harness.cli import task as task_cmd
from harness.cli._output import HELP_MARKUP, state

app = typer.Typer(
    name="galapagos",
    help="LLM-driven program search; every untrusted program runs in a locked-down container.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=False,
    rich_markup_mode=HELP_MARKUP,
)


@app.callback()
def _root(
    debug: Annotated[
        bool,
        typer.Option(
            "--debug",
            help="Show tracebacks instead of one-line errors; give it before the command "
            "(galapagos --debug run …).",
        ),
    ] = False,
) -> None:
    state.debug = debug


runs.register(app)
catalog.register(app)
app.add_typer(sandbox_cmd.app, name="sandbox")
app.add_typer(task_cmd.app, name="task")
app.add_typer(strategy_cmd.app, name="strategy")


def main() -> None:
    app(prog_name="galapagos")
