"""The start-up canaries, started before a run is planned (``galapagos run``).

A run's canaries (:func:`harness.sandbox.doctor.startup_canaries`) need nothing from the run:
``galapagos run`` starts them in a thread of their own as soon as its flags are read, so that
their container starts and their two jobs run while the process imports its libraries and plans
the run (≈0.4 s of the engine's work hidden behind ≈0.5 s of the host's).  The gate does not
move: :func:`~harness.sandbox.doctor.startup_canaries` takes their verdict (waiting for it if
needed) at the same point as before, before the run's first container exists, and raises on a
failed canary as before; no candidate runs until it returned.

:func:`canaries_started_early` owns the thread: on leaving it, a verdict nobody took (the plan
failed, the run used no Docker sandbox) is waited for, so its container is removed before the
process exits (the thread is not a daemon either).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["canaries_started_early", "take_early_verdict"]

_lock = threading.Lock()
_early: concurrent.futures.Future[Any] | None = None


def _work(future: concurrent.futures.Future[Any]) -> None:
    try:
        from harness.sandbox.doctor import STARTUP_CANARIES, _canaries

        future.set_result(asyncio.run(_canaries(STARTUP_CANARIES)))
    except BaseException as exc:  # handed to whoever takes the verdict
        future.set_exception(exc)


@contextlib.contextmanager
def canaries_started_early(enabled: bool = True) -> Iterator[None]:
    """Run the start-up canaries in a thread for the ``with`` block (see the module docstring)."""
    global _early
    future: concurrent.futures.Future[Any] | None = None
    if enabled:
        future = concurrent.futures.Future()
        with _lock:
            _early = future
        threading.Thread(
            target=_work, args=(future,), name="galapagos-early-canaries", daemon=False
        ).start()
    try:
        yield
    finally:
        if future is not None:
            with _lock:
                if _early is future:
                    _early = None
            # Not taken, or taken and abandoned: its container is gone once it finished.
            with contextlib.suppress(BaseException):
                future.exception()


def take_early_verdict() -> concurrent.futures.Future[Any] | None:
    """The early canaries' checks (a future), once: the first caller takes them."""
    global _early
    with _lock:
        future, _early = _early, None
    return future
