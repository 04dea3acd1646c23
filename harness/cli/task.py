"""`galapagos task …` commands."""

from __future__ import annotations

import typer

app = typer.Typer(help="task commands", no_args_is_help=True)
