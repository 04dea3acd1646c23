"""A candidate-image container whose main process floods its stderr, run to its deadline through
the Docker backend's own job exchange (its deadline, kill and removal).

Shared by ``bench/kill_latency.py`` (the figures) and ``tests/sandbox/test_docker_flood.py``
(the behaviour).  The in-container runner captures a candidate's own output, so a flood at the
container level is what the backend sees when the runner itself floods; the container is built
by hand, and from the moment it runs everything is the backend's: ``_exchange`` sends a job,
waits for its answer until ``wall_s`` + the host's grace, kills the container when none came,
and ``_discard`` removes it.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

from harness.core.records import EvalResult
from harness.sandbox import ownership
from harness.sandbox.attach import AttachedStream
from harness.sandbox.docker_backend import HOST_GRACE_S, DockerBackend, _Started
from harness.sandbox.hardening import (
    CANDIDATE_UID,
    ContainerSpec,
    create_hardened_container,
    minimal_env,
)
from harness.sandbox.protocol import Job, Limits

FLOOD_COMMAND = "import os\nline = b'y' * 65536\nwhile True:\n    os.write(2, line)\n"


def flood_spec(image: str, limits: Limits, name_prefix: str) -> ContainerSpec:
    """A container of ``image`` with the candidate hardening whose main process floods stderr."""
    return ContainerSpec(
        image=image,
        command=("/usr/bin/python3", "-c", FLOOD_COMMAND),
        limits=limits,
        labels={
            ownership.LABEL: "1",
            ownership.OWNER_LABEL: ownership.owner_id(),
            ownership.ROLE_LABEL: "eval",
        },
        env=minimal_env(pythonpath=""),
        name=f"{name_prefix}-{uuid.uuid4().hex[:10]}",
        cap_add=(),
        user=f"{CANDIDATE_UID}:{CANDIDATE_UID}",
    )


@dataclass(frozen=True)
class Flooded:
    """What the backend answered for a job sent to a flooding container."""

    result: EvalResult
    #: The container's name (the backend removes it in the background after the answer).
    name: str
    #: Stderr bytes the host drained while it waited.
    stderr_bytes: int
    #: The container's state right after the backend's kill (``ExitCode``, ``OOMKilled``…).
    state: dict[str, object]
    #: Monotonic times: the backend's deadline (``wall_s`` + grace after the job was sent) and
    #: its answer.
    deadline: float
    answered: float


async def flood_to_deadline(
    backend: DockerBackend, image: str, wall_s: float, name_prefix: str
) -> Flooded:
    """Start a flooding container and give it a job through ``backend``'s own exchange."""
    limits = Limits(wall_s=wall_s, memory_mb=256, cpus=1.0, pids=32, tmpfs_mb=16)
    container = create_hardened_container(backend.client, flood_spec(image, limits, name_prefix))
    stream = AttachedStream.open(backend.client, container, max_frame=1 << 20)
    started = _Started(container, stream)
    job = Job(mode="sealed", function="evaluate", candidate="", files={}, limits=limits)
    try:
        container.start()
        t0 = time.monotonic()
        result, _ = await backend._exchange(started, job, t0)
        answered = time.monotonic()
        container.reload()
        state = dict(container.attrs.get("State") or {})
    finally:
        backend._discard(started)
    return Flooded(
        result, container.name, stream.stderr_bytes, state, t0 + wall_s + HOST_GRACE_S, answered
    )
