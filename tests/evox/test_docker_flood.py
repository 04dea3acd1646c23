"""A strategy flooding its container's stderr cannot delay its kill (issue 20).

The strategy server's stdout is its container's stderr, so a strategy that prints without end
floods the attach socket.  The call must fail at its deadline saying so, and the container must
be gone after ``close()`` — the figures (deadline vs. removal) are ``bench/kill_latency.py``'s.
"""

from __future__ import annotations

import docker
import docker.errors
import pytest

from harness.core.errors import StrategyError
from harness.sandbox.sessions import DockerSession
from scaffolds.evox.factory import ContainerLimits, StrategyFactory
from scaffolds.evox.transport import SessionTransport
from tests.evox.conftest import valid
from tests.evox.strategies import module

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("no_leaked_containers")]

#: sample() prints 64 KiB lines forever; add() is honest.
FLOOD = module(sample="_line = 'y' * 65536\nwhile True:\n    print(_line)")


async def test_a_flooding_call_fails_at_its_deadline_and_its_container_is_removed(
    docker_factory: StrategyFactory,
) -> None:
    client = docker_factory.client(ContainerLimits(memory_mb=256, call_s=2.0))
    await client.start()
    transport = client.transport
    assert isinstance(transport, SessionTransport)
    session = transport.session
    assert isinstance(session, DockerSession) and session.container is not None
    name = session.container.name
    try:
        await client.load(FLOOD, {}, 0)
        await client.new("main")
        await client.add([{"id": "p1", "solution": "x = 1", "metrics": {"combined_score": 1.0}}])
        with pytest.raises(StrategyError) as caught:
            await client.sample(4)
        assert caught.value.kind == "timeout"
        assert "did not answer 'sample' within its deadline" in str(caught.value)
        assert session.stream is not None and session.stream.stderr_bytes > 1 << 20
    finally:
        await client.close()
    engine = docker.from_env()
    try:
        with pytest.raises(docker.errors.NotFound):
            engine.containers.get(name)
    finally:
        engine.close()


async def test_valid_rejects_a_flooding_strategy_and_leaves_no_container(
    docker_factory: StrategyFactory,
) -> None:
    report = await valid(FLOOD, docker_factory)
    failed = report.failure
    assert failed is not None, report.to_dict()
    # Printing costs CPU: the judge's per-call limit stops it (or the call's deadline does).
    assert failed.name in ("call_time", "bulk_add_sample"), report.to_dict()
    assert "sample()" in failed.detail or "'sample'" in failed.detail, failed.detail
