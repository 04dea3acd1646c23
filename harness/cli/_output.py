"""CLI plumbing: data on stdout, messages on stderr, harness errors as one line + exit code."""

from __future__ import annotations

import functools
import json
import math
import os
import signal
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from harness.core.errors import ConfigError, HarnessError

if TYPE_CHECKING:
    from harness.store.sqlite import SQLiteStore

__all__ = [
    "HELP_MARKUP",
    "StoreOpt",
    "Terminated",
    "err",
    "fmt_score",
    "guard",
    "open_existing_store",
    "out",
    "print_json",
    "run_terminable",
    "state",
    "status_word",
    "store_for_listing",
    "store_hint",
]

#: The ``--store`` option every command that reads or writes runs takes.
StoreOpt = Annotated[
    Path | None,
    typer.Option("--store", help="Run store (SQLite file).", envvar="GALAPAGOS_STORE"),
]

P = ParamSpec("P")
R = TypeVar("R")

#: Messages and progress go to stderr; stdout carries only data.
err = Console(stderr=True, highlight=False)
#: Piped output is not squeezed to 80 columns (tables hold run ids and task names).
out = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 160)


#: Help is click's plain layout: typer's rich panels print every flag as ``--json <bool>``, as
#: if it took a value (typer 0.29); the plain layout shows flags as flags.
HELP_MARKUP = None


class _State:
    debug = False


class Terminated(Exception):
    """The command was stopped by SIGTERM after its cleanup ran (exit 143)."""


def run_terminable(main: Coroutine[Any, Any, R]) -> R:
    """``asyncio.run(main)`` in which SIGTERM stops ``main`` as Ctrl-C does: the task is
    cancelled, so its ``finally`` blocks run (sandboxes are removed, not left to a later reaper),
    then :class:`Terminated` is raised."""
    import asyncio

    async def wrapper() -> R:
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()
        termed = False

        def on_term() -> None:
            nonlocal termed
            termed = True
            task.cancel()

        loop.add_signal_handler(signal.SIGTERM, on_term)
        try:
            return await main
        except asyncio.CancelledError:
            if termed:
                raise Terminated("terminated") from None
            raise
        finally:
            loop.remove_signal_handler(signal.SIGTERM)

    return asyncio.run(wrapper())


state = _State()


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, default=_default, allow_nan=False) + "\n")


def _default(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "item"):
        return value.item()
    return str(value)


def open_existing_store(path: Path | None = None) -> SQLiteStore:
    """The run store at ``path`` (default: the usual one) for a command that only reads it.

    A missing file is a mistyped ``--store``, not a new store: it is an error (exit 2) and
    nothing is created.  Only ``run`` makes a store.
    """
    from harness.store.sqlite import SQLiteStore, default_store_path

    target = path or default_store_path()
    if not target.is_file():
        raise ConfigError(f"no run store at {target}; runs are created by galapagos run")
    return SQLiteStore(target)


def store_for_listing(path: Path | None) -> SQLiteStore | None:
    """The run store a listing reads, or ``None`` when it does not exist yet (a listing of a
    store no run has created is empty, not an error; nothing is created)."""
    from harness.store.sqlite import SQLiteStore, default_store_path

    target = path or default_store_path()
    if target.is_file():
        return SQLiteStore(target)
    if path is not None:
        err.print(f"note: no run store at {target} yet (galapagos run creates it)", soft_wrap=True)
    return None


def store_hint(path: Path | None) -> str:
    """`` --store PATH`` for hints when the store is not the one the environment names."""
    if path is None:
        return ""
    env = os.environ.get("GALAPAGOS_STORE")
    if env and Path(env).expanduser().resolve() == Path(path).expanduser().resolve():
        return ""
    return f" --store {path}"


def fmt_score(value: float | None) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    return f"{value:.6g}"


#: One rendering of a check's status for every command that runs checks (task check, strategy
#: validate); the JSON keeps each report's own value ("skip" / "skipped").
_STATUS = {
    "pass": ("PASS", "green"),
    "fail": ("FAIL", "bold red"),
    "skip": ("SKIP", "yellow"),
    "skipped": ("SKIP", "yellow"),
}


def status_word(status: str) -> str:
    """``PASS``, ``FAIL`` or ``SKIP`` as rich markup (four letters each, so columns align)."""
    word, style = _STATUS[status]
    return f"[{style}]{word}[/]"


def guard(func: Callable[P, R]) -> Callable[P, R]:
    """Turn harness errors into ``error: …`` on stderr and exit 1/2 (``--debug``: traceback)."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except HarnessError as exc:
            if state.debug:
                raise
            err.print(f"[bold red]error:[/] {escape(_one_line(str(exc)))}", soft_wrap=True)
            raise typer.Exit(code=exc.exit_code) from None
        except KeyboardInterrupt:
            err.print("interrupted")
            raise typer.Exit(code=130) from None
        except Terminated:
            err.print("terminated")
            raise typer.Exit(code=143) from None
        except (typer.Exit, typer.Abort):
            raise
        except Exception as exc:  # a bug, not bad input: still one line unless --debug
            if state.debug:
                raise
            err.print(
                f"[bold red]error:[/] internal error {type(exc).__name__}: "
                f"{escape(_one_line(str(exc)))} (rerun with --debug for the traceback)",
                soft_wrap=True,
            )
            raise typer.Exit(code=1) from None

    return wrapper


def _one_line(text: str) -> str:
    return " ".join(text.split())
