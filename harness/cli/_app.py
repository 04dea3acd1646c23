"""Root typer app: registers the per-noun sub-apps and the global ``--debug`` flag."""

from __future__ import annotations

import importlib.metadata
import sys
from typing import Annotated

import typer

from harness.cli import bench, catalog, runs, serve, show
from harness.cli import sandbox as sandbox_cmd
from harness.cli import strategy as strategy_cmd
from harness.cli import task as task_cmd
from harness.cli._output import HELP_MARKUP, run_app, state

app = typer.Typer(
    name="galapagos",
    help="LLM-driven program search; every untrusted program runs in a locked-down container.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_show_locals=False,
    add_completion=False,
    rich_markup_mode=HELP_MARKUP,
)


def _version(value: bool) -> None:
    if value:
        try:
            version = importlib.metadata.version("galapagos")
        except importlib.metadata.PackageNotFoundError:  # run from a checkout, not installed
            version = "unknown (not installed)"
        sys.stdout.write(f"galapagos {version}\n")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            "-V",
            callback=_version,
            is_eager=True,
            help="Print the version and exit.",
        ),
    ] = False,
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
bench.register(app)
show.register(app)
catalog.register(app)
serve.register(app)
app.add_typer(sandbox_cmd.app, name="sandbox")
app.add_typer(task_cmd.app, name="task")
app.add_typer(strategy_cmd.app, name="strategy")


def main() -> None:
    run_app(app, "galapagos")
