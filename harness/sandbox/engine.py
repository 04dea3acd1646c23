"""Waiting out the Docker engine: is it answering, and wait (bounded) until it does.

An engine restart (dockerd stopped and started again, as a package upgrade or an operator
does) takes seconds; a run should wait for it rather than charge its candidates or die.  The
wait is bounded by ``evaluator.engine_wait_s``: past it the run stops as interrupted
(:class:`~harness.core.errors.EngineUnavailable`) and ``galapagos resume`` continues it.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable

import docker
import docker.errors
import requests.exceptions

from harness.core.errors import EngineUnavailable

__all__ = ["engine_reachable", "wait_for_engine"]

log = logging.getLogger(__name__)

#: Seconds between pings while the engine is down (it usually needs 1-5 s to come back).
POLL_S = 0.5


def engine_reachable(client: docker.DockerClient) -> bool:
    """Whether the engine answers.  A stopping dockerd removes its socket at once but keeps
    answering pings on connections already open for about a second, while every new request
    fails: on a Unix socket, the socket file must exist too."""
    socket_path = getattr(getattr(client.api, "_custom_adapter", None), "socket_path", None)
    if socket_path and not os.path.exists(socket_path):
        return False
    try:
        return bool(client.ping())
    except (docker.errors.DockerException, requests.exceptions.RequestException, OSError):
        return False


def wait_for_engine(
    client: docker.DockerClient,
    deadline_s: float,
    *,
    why: str = "",
    notice: Callable[[str], None] | None = None,
) -> float:
    """Block until the engine answers; the seconds waited.  Raises
    :class:`EngineUnavailable` after ``deadline_s``."""
    if engine_reachable(client):
        return 0.0
    started = time.monotonic()
    say = notice or log.warning
    say(
        f"the Docker engine is not answering ({why or 'unreachable'}); waiting up to "
        f"{deadline_s:g} s for it to come back (evaluator.engine_wait_s)"
    )
    while time.monotonic() - started < deadline_s:
        time.sleep(POLL_S)
        if engine_reachable(client):
            waited = time.monotonic() - started
            say(f"the Docker engine is back after {waited:.1f} s; going on")
            return waited
    raise EngineUnavailable(
        f"the Docker engine stayed unreachable for {deadline_s:g} s ({why or 'no answer'}); "
        "start it (bash scripts/docker-engine.sh) and continue the run with galapagos resume"
    )
