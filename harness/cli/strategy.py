"""`galapagos strategy …` commands."""

from __future__ import annotations

import typer

app = typer.Typer(help="strategy commands", no_args_is_help=True)
