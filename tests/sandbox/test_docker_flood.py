"""A container flooding its stderr cannot delay its kill at the deadline (issue 20).

A candidate's own output is captured by the runner inside the container (the red-team case
``stderr_flood`` ends as ``output_limit``); this is the backend's side of a flood at the
container level: a job given to a flooding container through the backend's own exchange, which
waits until the deadline, kills the container and removes it.  The host drains the stream all
the time, so the deadline holds and the container is gone after removal — the figures are
``bench/kill_latency.py``'s (the same container, ``bench/_flood.py``).
"""

from __future__ import annotations

import time

import docker
import docker.errors
import pytest

from bench._flood import flood_to_deadline
from harness.sandbox.docker_backend import DockerBackend

pytestmark = pytest.mark.docker


async def test_a_flooding_container_is_stopped_at_its_deadline_and_removed(
    docker_backend: DockerBackend, sandbox_images: dict[str, str]
) -> None:
    flooded = await flood_to_deadline(
        docker_backend, sandbox_images["python-eval"], 2.0, "galapagos-test-flood"
    )
    assert flooded.result.status == "timeout", flooded.result
    assert flooded.answered >= flooded.deadline  # the answer came from the deadline
    assert flooded.stderr_bytes > 1 << 20  # it was flooding while the deadline ran out
    assert flooded.state["ExitCode"] == 137 and not flooded.state["OOMKilled"]  # killed
    client = docker.from_env()
    try:
        # The backend removes it in the background; it never comes back once gone.
        for _ in range(600):
            try:
                client.containers.get(flooded.name)
            except docker.errors.NotFound:
                break
            time.sleep(0.05)
        with pytest.raises(docker.errors.NotFound):
            client.containers.get(flooded.name)
    finally:
        client.close()
