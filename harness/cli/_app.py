"""Root typer app: the global flags, and the per-noun sub-apps imported on first use.

Each command lives in a module of its own (``runs``, ``show``, ``bench``…) whose imports reach
far into the library (the controller, the LLM client, the service); importing all of them cost
every ``galapagos`` call over a second.  The root group knows which module registers which
command (:data:`COMMANDS`) and imports a module only when one of its commands runs (or
``--help`` lists them all), so ``galapagos --version`` and ``galapagos runs`` start at once.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Annotated

import typer
from typer.core import TyperGroup

from harness.cli._output import HELP_MARKUP, run_app, state

if TYPE_CHECKING:  # typer carries its own click
    from typer._click import Command, Context

__all__ = ["COMMANDS", "app", "main"]

#: Command → the ``harness.cli`` module that defines it, in the order ``--help`` lists them.
#: A module either has ``register(app)`` (top-level commands) or is itself a sub-app ``app``.
COMMANDS: dict[str, str] = {
    "run": "runs",
    "resume": "runs",
    "runs": "runs",
    "bench": "bench",
    "leaderboard": "bench",
    "show": "show",
    "export": "show",
    "scaffolds": "catalog",
    "blocks": "catalog",
    "tasks": "catalog",
    "serve": "serve",
    "token": "serve",
    "sandbox": "sandbox",
    "task": "task",
    "strategy": "strategy",
}


def _load(name: str) -> Command | None:
    """The click command ``name``, from its module (imported now)."""
    module = importlib.import_module(f"harness.cli.{COMMANDS[name]}")
    holder = typer.Typer(rich_markup_mode=HELP_MARKUP, add_completion=False)
    register = getattr(module, "register", None)
    if register is not None:
        register(holder)
    else:
        holder.add_typer(module.app, name=name)
    group = typer.main.get_group(holder)
    return group.get_command(typer.Context(group), name)


class _LazyGroup(TyperGroup):
    """The root group: commands come from :data:`COMMANDS`, loaded when asked for."""

    def list_commands(self, ctx: Context) -> list[str]:
        return [*super().list_commands(ctx), *COMMANDS]

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is None and cmd_name in COMMANDS:
            command = _load(cmd_name)
            if command is not None:
                self.add_command(command, cmd_name)
        return command


app = typer.Typer(
    name="galapagos",
    cls=_LazyGroup,
    help="LLM-driven program search; every untrusted program runs in a locked-down container.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_show_locals=False,
    add_completion=False,
    rich_markup_mode=HELP_MARKUP,
)


def _version(value: bool) -> None:
    if value:
        import importlib.metadata

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


def main() -> None:
    run_app(app, "galapagos")
