"""CLI plumbing: data on stdout, messages on stderr, harness errors as one line + exit code."""

from __future__ import annotations

import contextlib
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
    "announce_new_store",
    "clip",
    "err",
    "fmt_score",
    "guard",
    "open_existing_store",
    "out",
    "print_json",
    "run_app",
    "run_terminable",
    "state",
    "status_word",
    "store_for_listing",
    "store_for_writing",
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
    #: Set by a command that has closed everything it opened (a run: its containers removed,
    #: its store closed): the process then exits without the interpreter's finalisation.
    exit_at_once = False


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


def store_for_writing(path: Path | None, *, announce: bool = True) -> Path:
    """Where a command that creates runs writes: ``path`` (``--store`` or ``GALAPAGOS_STORE``)
    or the default.  A named store in a folder that does not exist is a mistyped path, not a
    new store: an error (exit 2), nothing created.  A new file in an existing folder is said
    (``announce``; a caller that validates more first says it itself, with
    :func:`announce_new_store`)."""
    if path is None:
        from harness.store.sqlite import default_store_path

        return default_store_path()
    target = path.expanduser()
    if target.is_file():
        return target
    if target.exists():
        raise ConfigError(f"--store {path}: not a file; give the path of a run store (SQLite)")
    if not target.parent.is_dir():
        raise ConfigError(
            f"--store {path}: the folder {target.parent} does not exist (a typo?); create it "
            "first to start a new run store there"
        )
    if announce:
        announce_new_store(target)
    return target


def announce_new_store(target: Path) -> None:
    if not target.exists():
        err.print(f"note: new run store {target}", soft_wrap=True)


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


def clip(text: str, width: int) -> str:
    """``text`` on one line, cut at a word boundary before ``width`` with `` …`` (never
    mid-word)."""
    line = " ".join(text.split())
    if len(line) <= width:
        return line
    cut = line[: width - 2]
    if " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + " …"


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


def run_app(app: typer.Typer, prog_name: str) -> None:
    """Run the CLI; a usage error (an unknown option, a bad value) is one line with a pointer
    to the help, as every other error, instead of click's three-line block.

    typer 0.29 carries its own copy of click, whose exception classes are private: they are
    told apart by the public base class and their attributes.

    A command that set :attr:`_State.exit_at_once` (``run``/``resume``, once their containers
    are removed and their store closed) exits at once with its code, output flushed: tearing
    down the ~1,500 modules a run imported takes the interpreter 0.1–0.5 s, for nothing."""
    try:
        _run_app(app, prog_name)
    except SystemExit as exc:
        if state.exit_at_once:
            _exit_now(exc.code)
        raise


def _exit_now(code: object) -> None:
    import logging

    if not isinstance(code, int):
        if code is not None:
            sys.stderr.write(f"{code}\n")
        code = 0 if code is None else 1
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    logging.shutdown()
    os._exit(code)


def _run_app(app: typer.Typer, prog_name: str) -> None:
    try:
        code = app(prog_name=prog_name, standalone_mode=False)
    except typer.TyperException as exc:
        ctx = getattr(exc, "ctx", None)
        exit_code = int(getattr(exc, "exit_code", 1))
        usage = exit_code == 2 and type(exc).__name__ != "NoArgsIsHelpError"
        if usage and hasattr(exc, "format_message"):
            where = getattr(ctx, "command_path", None) or prog_name
            err.print(
                f"[bold red]error:[/] {escape(_one_line(exc.format_message()))} "
                f"(see {where} --help)",
                soft_wrap=True,
            )
        elif callable(show := getattr(exc, "show", None)):  # ``galapagos task``: its help
            show()
        sys.exit(exit_code)
    except typer.Abort:
        err.print("aborted")
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)


def _one_line(text: str) -> str:
    return " ".join(text.split())
