"""The start-up canaries, started before a run is planned, in a container of their own.

``galapagos run`` no longer uses this: a run on ``python-eval`` runs its canaries in its own
first container (:meth:`harness.runtime.Runtime.canaries_in_pool`), which saves a container;
a caller that knows its run cannot (a folder or toolchain image) may still start them here,
and :func:`~harness.sandbox.doctor.startup_canaries` takes their verdict as before.

A run's canaries (:func:`harness.sandbox.doctor.startup_canaries`) need nothing from the run:
``galapagos run`` starts them in a thread of their own as soon as its flags are read, so that
their container starts and their two jobs run while the process imports its libraries and plans
the run (≈0.4 s of the engine's work hidden behind ≈0.5 s of the host's).  The gate does not
move: :func:`~harness.sandbox.doctor.startup_canaries` takes their verdict (waiting for it if
needed) at the same point as before, before the run's first container exists, and raises on a
failed canary as before; no candidate runs until it returned.

:func:`canaries_started_early` owns the thread: on leaving it, a verdict nobody took (the plan
failed, the run used no Docker sandbox) is waited for, and in every case the thread is joined,
so the canaries' container is removed before the process exits (the thread is not a daemon
either); SIGTERM meanwhile ends the command through that same wait (exit 143).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["canaries_started_early", "early_pending", "take_early_verdict"]

_lock = threading.Lock()
_early: concurrent.futures.Future[Any] | None = None


def _work(future: concurrent.futures.Future[Any]) -> None:
    """The canaries; their verdict is handed over before their container is removed (the
    thread ends after the removal)."""
    try:
        from harness.sandbox.doctor import STARTUP_CANARIES, _canaries

        asyncio.run(_canaries(STARTUP_CANARIES, verdict=future.set_result))
    except BaseException as exc:  # handed to whoever takes the verdict
        if not future.done():
            future.set_exception(exc)


@contextlib.contextmanager
def canaries_started_early(enabled: bool = True) -> Iterator[None]:
    """Run the start-up canaries in a thread for the ``with`` block (see the module docstring)."""
    global _early
    future: concurrent.futures.Future[Any] | None = None
    thread: threading.Thread | None = None
    if enabled:
        future = concurrent.futures.Future()
        with _lock:
            _early = future
        thread = threading.Thread(
            target=_work, args=(future,), name="galapagos-early-canaries", daemon=False
        )
        thread.start()
    restore = _stop_on_sigterm() if enabled else None
    try:
        yield
    finally:
        if restore is not None:
            restore()
        if future is not None and thread is not None:
            with _lock:
                if _early is future:
                    _early = None
            # Taken or not, the canaries' container is gone once the thread ended (the
            # process may leave with os._exit after this, which joins no thread).
            thread.join()


def _stop_on_sigterm() -> Callable[[], None] | None:
    """Until the run's own handlers take over, SIGTERM ends the command through this block's
    ``finally`` (exit 143) instead of killing it before the canaries' container is removed."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def on_term(signum: int, frame: object) -> None:
        sys.stderr.write("terminated\n")
        raise SystemExit(143)

    previous = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, on_term)

    def restore() -> None:
        if signal.getsignal(signal.SIGTERM) is on_term:
            signal.signal(signal.SIGTERM, previous)

    return restore


def take_early_verdict() -> concurrent.futures.Future[Any] | None:
    """The early canaries' checks (a future), once: the first caller takes them."""
    global _early
    with _lock:
        future, _early = _early, None
    return future


def early_pending() -> bool:
    """Early canaries were started and nobody took their verdict yet."""
    with _lock:
        return _early is not None
