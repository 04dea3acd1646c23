"""A container flooding its stderr cannot delay its kill at the deadline (issue 20).

A candidate's own output is captured by the runner inside the container (the red-team case
``stderr_flood`` ends as ``output_limit``); this is the backend's side of a flood at the
container level: the attach stream read with the backend's deadline, then the kill and removal
the backend performs.  The host drains the stream all the time, so the deadline holds and the
container is gone after removal — the figures are ``bench/kill_latency.py``'s.
"""

from __future__ import annotations

import time
import uuid

import docker
import docker.errors
import pytest

from harness.sandbox import ownership
from harness.sandbox.attach import AttachedStream
from harness.sandbox.hardening import (
    CANDIDATE_UID,
    ContainerSpec,
    create_hardened_container,
    minimal_env,
)
from harness.sandbox.protocol import Limits

pytestmark = pytest.mark.docker

FLOOD = "import os\nline = b'y' * 65536\nwhile True:\n    os.write(2, line)\n"


def test_a_flooding_container_is_stopped_at_its_deadline_and_removed(
    sandbox_images: dict[str, str],
) -> None:
    client = docker.from_env()
    spec = ContainerSpec(
        image=sandbox_images["python-eval"],
        command=("/usr/bin/python3", "-c", FLOOD),
        limits=Limits(wall_s=2.0, memory_mb=256, cpus=1.0, pids=32, tmpfs_mb=16),
        labels={
            ownership.LABEL: "1",
            ownership.OWNER_LABEL: ownership.owner_id(),
            ownership.ROLE_LABEL: "eval",
        },
        env=minimal_env(pythonpath=""),
        name=f"galapagos-test-flood-{uuid.uuid4().hex[:10]}",
        cap_add=(),
        user=f"{CANDIDATE_UID}:{CANDIDATE_UID}",
    )
    container = create_hardened_container(client, spec)
    stream = AttachedStream.open(client, container, max_frame=1 << 20)
    try:
        container.start()
        with pytest.raises(TimeoutError):
            stream.recv_frame(time.monotonic() + 2.0)
        assert stream.stderr_bytes > 1 << 20  # it was flooding while the deadline ran out
        container.kill()
        state = container.wait(timeout=30)
        assert state["StatusCode"] == 137  # killed, not exited
    finally:
        stream.close()
        assert ownership.remove_containers([container]) == [container.name]
        client.close()
    with pytest.raises(docker.errors.NotFound):
        docker.from_env().containers.get(container.name)
