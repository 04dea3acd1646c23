"""Kill latency under a stderr flood: a container's deadline vs. the moment it is gone.

A container that floods its stderr used to hold up its own kill: dockerd copies the output into
the attach socket, and a copy that cannot write blocks the container's exit until docker-py's
request timeout (measured at 122-131 s before the host drained the attach streams all the time,
see ``harness/sandbox/attach.py``).  This prints, for each kind of container, how long after its
deadline the caller got the verdict and the container was gone (``docker inspect`` says
NotFound).  The issue's bound is ≤ 2 s over the deadline.

- ``strategy``: an EvoX strategy server whose ``sample()`` prints without end (the server's
  stdout is its container's stderr), called with a per-call deadline, through the runtime's own
  client: the call raises at the deadline, ``close()`` removes the container.
- ``candidate``: a container from the candidate image with the candidate hardening whose main
  process floods stderr (the in-container runner captures a candidate's own output, so this is
  what a flood at the container level looks like to the backend), given a job through the
  Docker backend's own exchange (``bench/_flood.py``): its deadline is ``--deadline`` plus the
  host's grace (``HOST_GRACE_S``), then the backend kills the container and removes it.

    python bench/kill_latency.py [--deadline 2] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import docker  # noqa: E402
import docker.errors  # noqa: E402

from bench._flood import flood_to_deadline  # noqa: E402
from harness.core.errors import StrategyError  # noqa: E402
from harness.sandbox.docker_backend import HOST_GRACE_S, DockerBackend  # noqa: E402
from harness.sandbox.images import build_images  # noqa: E402
from scaffolds.evox.factory import ContainerLimits, StrategyFactory, make_factory  # noqa: E402

FLOOD_STRATEGY = """
from skydiscover.search.base_database import Program, ProgramDatabase


class EvolvedProgram(Program):
    pass


class EvolvedProgramDatabase(ProgramDatabase):
    def add(self, program, iteration=None, **kwargs):
        self.programs[program.id] = program
        return program.id

    def sample(self, num_context_programs=4, **kwargs):
        line = "y" * 65536
        while True:
            print(line)
"""


def gone(client: docker.DockerClient, name: str) -> bool:
    try:
        client.containers.get(name)
    except docker.errors.NotFound:
        return True
    return False


async def strategy_once(factory: StrategyFactory, deadline_s: float) -> tuple[float, float]:
    client = factory.client(ContainerLimits(memory_mb=256, call_s=deadline_s))
    try:
        await client.start()
        await client.load(FLOOD_STRATEGY, {}, 0)
        await client.new("main")
        await client.add([{"id": "p1", "solution": "x = 1", "metrics": {"combined_score": 1.0}}])
        transport = client.transport
        name = transport.session.container.name  # type: ignore[attr-defined]
        started = time.monotonic()
        try:
            await client.sample(4, deadline_s=deadline_s)
        except StrategyError as exc:
            assert exc.kind == "timeout", exc
        else:
            raise AssertionError("the flooding sample() answered")
        raised = time.monotonic()
        flooded = transport.session.stream.stderr_bytes  # type: ignore[attr-defined]
        assert flooded > 1 << 20, f"only {flooded} bytes of stderr: not a flood"
    finally:
        await client.close()
    while not gone(docker.from_env(), name):
        await asyncio.sleep(0.01)
    removed = time.monotonic()
    deadline = started + deadline_s
    return raised - deadline, removed - deadline


async def candidate_once(
    backend: DockerBackend, image: str, deadline_s: float
) -> tuple[float, float]:
    flooded = await flood_to_deadline(backend, image, deadline_s, "galapagos-bench-flood")
    assert flooded.result.status == "timeout", flooded.result
    assert flooded.stderr_bytes > 1 << 20, (
        f"only {flooded.stderr_bytes} bytes of stderr: not a flood"
    )
    while not gone(backend.client, flooded.name):
        await asyncio.sleep(0.01)
    removed = time.monotonic()
    return flooded.answered - flooded.deadline, removed - flooded.deadline


def show(kind: str, rows: list[tuple[float, float]], deadline_s: float) -> None:
    verdict = [r[0] for r in rows]
    removal = [r[1] for r in rows]
    print(
        f"{kind:<10} deadline {deadline_s:g} s  verdict +{statistics.median(verdict):.2f} s "
        f"(max +{max(verdict):.2f})  container gone +{statistics.median(removal):.2f} s "
        f"(max +{max(removal):.2f})  over {len(rows)} runs"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deadline", type=float, default=2.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    image = build_images(["python-eval"])["python-eval"]
    factory = make_factory("docker")
    try:
        rows = [await strategy_once(factory, args.deadline) for _ in range(args.repeat)]
        show("strategy", rows, args.deadline)
    finally:
        factory.close()
    backend = DockerBackend(pool_size=0)
    try:
        rows = [await candidate_once(backend, image, args.deadline) for _ in range(args.repeat)]
        show("candidate", rows, args.deadline + HOST_GRACE_S)
    finally:
        backend.close()


if __name__ == "__main__":
    asyncio.run(main())
