"""pytest fixture that fails a test which leaves sandbox containers behind.

Wire it in with ``pytest_plugins = ["harness.sandbox.pytest_plugin"]`` in the root conftest and
request ``no_leaked_containers`` (autouse in the sandbox and red-team suites).  It looks only at
containers labelled with *this* process as owner, so concurrent test runs on the same engine
never interfere.  Removal is asynchronous in the backends, so a container still present is
given a few seconds to go before it counts as leaked; leaked containers are removed.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import docker
import docker.errors
import pytest
import requests.exceptions

from harness.sandbox.ownership import OWNER_LABEL, owner_id, remove_containers

__all__ = ["leftover_containers", "no_leaked_containers"]

#: Seconds a container may take to disappear after its test ends before it counts as leaked.
SETTLE_S = 15.0


def _client() -> docker.DockerClient | None:
    try:
        client = docker.from_env(timeout=30)
        client.ping()
    except (docker.errors.DockerException, requests.exceptions.RequestException):
        return None  # no engine: nothing can leak
    return client


def leftover_containers(client: docker.DockerClient, settle_s: float = SETTLE_S) -> list:
    """This process's containers still present after waiting up to ``settle_s``."""
    owner = owner_id()
    end = time.monotonic() + settle_s
    while True:
        left = client.containers.list(
            all=True, ignore_removed=True, filters={"label": f"{OWNER_LABEL}={owner}"}
        )
        if not left or time.monotonic() > end:
            return left
        time.sleep(0.2)


@pytest.fixture
def no_leaked_containers() -> Iterator[None]:
    client = _client()
    yield
    if client is None:
        return
    left = leftover_containers(client)
    if left:
        names = ", ".join(c.name for c in left)
        remove_containers(left)
        pytest.fail(f"the test left {len(left)} sandbox container(s) behind: {names}")
