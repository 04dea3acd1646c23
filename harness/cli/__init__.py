"""The ``galapagos`` command line: one typer sub-app per noun over the library functions."""

from __future__ import annotations

from harness.cli._app import app, main

__all__ = ["app", "main"]
