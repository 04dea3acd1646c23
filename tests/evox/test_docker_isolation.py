"""What a strategy container is: hardened, cut off from the host, and gone when closed.

The spy strategy below skips the pre-filter on purpose (it imports ``os`` and ``socket``): it
checks the sandbox itself, not the cheap gate in front of it.  It reports what it could reach
through the one channel it has — the label of its answer.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from harness.components.population import InMemoryPopulation
from harness.core.errors import StrategyError
from harness.core.records import Program
from scaffolds.evox.factory import ContainerLimits, StrategyFactory
from scaffolds.evox.labels import default_labels
from scaffolds.evox.seed import seed_source
from scaffolds.evox.strategies import RemoteStrategy
from tests.evox.conftest import valid_source
from tests.evox.strategies import module

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("no_leaked_containers")]

SPY = module(
    imports="import os\nimport socket\n",
    sample="""
seen = ["env=" + ("LEAK" if "GALAPAGOS_TEST_CANARY" in os.environ else "clean")]
with open("/proc/1/environ") as handle:
    seen.append("init_env=" + ("LEAK" if "GALAPAGOS_TEST_CANARY" in handle.read() else "clean"))
for name, path in (("host_file", HOST_FILE), ("docker_sock", "/var/run/docker.sock")):
    try:
        with open(path) as handle:
            seen.append(name + "=LEAK")
    except OSError as exc:
        seen.append(name + "=" + type(exc).__name__)
try:
    with open(HOST_FILE, "w") as handle:
        handle.write("overwritten")
    seen.append("write=LEAK")
except OSError as exc:
    seen.append("write=" + type(exc).__name__)
for name, host in (("bridge", "172.17.0.1"), ("internet", "8.8.8.8")):
    try:
        socket.create_connection((host, PORT), timeout=2).close()
        seen.append(name + "=LEAK")
    except OSError as exc:
        seen.append(name + "=" + type(exc).__name__)
seen.append("uid=" + str(os.getuid()))
if pool:
    return {"|".join(seen): pool[0]}, {"": []}
""",
)


@pytest.fixture
def listener() -> Iterator[tuple[int, list[str]]]:
    """A TCP listener on every host interface that records who connected."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("0.0.0.0", 0))
    server.listen()
    server.settimeout(0.2)
    connections: list[str] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, addr = server.accept()
            except OSError:
                continue
            connections.append(addr[0])
            conn.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1], connections
    stop.set()
    thread.join(timeout=2)
    server.close()


def program(i: int) -> Program:
    return Program(
        id=f"p{i}",
        code=f"score = {i}\n",
        iteration=i,
        metrics={"combined_score": i / 10},
        score=i / 10,
    )


async def deploy(
    factory: StrategyFactory, source: str, limits: ContainerLimits | None = None
) -> RemoteStrategy:
    strategy = RemoteStrategy(
        "spy",
        source,
        factory.client(limits or ContainerLimits()),
        labels=default_labels(),
        seed=1,
        bulk_deadline_s=60.0,
    )
    await strategy.boot()
    return strategy


async def test_a_strategy_container_cannot_reach_the_host(
    docker_factory: StrategyFactory,
    tmp_path: Path,
    listener: tuple[int, list[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    port, connections = listener
    canary = tmp_path / "canary.txt"
    canary.write_text("host secret")
    monkeypatch.setenv("GALAPAGOS_TEST_CANARY", "s3cr3t")
    source = SPY.replace("HOST_FILE", repr(str(canary))).replace("PORT", str(port))
    strategy = await deploy(docker_factory, source)
    try:
        await strategy.add([program(i) for i in range(3)])
        answer = await strategy.sample(2)
    finally:
        await strategy.close()
    report = dict(item.split("=", 1) for item in answer.parent[0].lstrip("?").split("|"))
    assert answer.parent[0].startswith("?")  # not an allowed label: the host rejects it
    assert report == {
        "env": "clean",
        "init_env": "clean",
        "host_file": "FileNotFoundError",
        "docker_sock": "FileNotFoundError",
        "write": report["write"],
        "bridge": report["bridge"],
        "internet": report["internet"],
        "uid": "65534",
    }
    assert report["write"] in ("OSError", "PermissionError", "FileNotFoundError")
    assert "LEAK" not in report.values()
    assert canary.read_text() == "host secret"
    assert connections == []
    with pytest.raises(StrategyError, match="allowed labels"):
        from scaffolds.evox.records import resolve

        pop = InMemoryPopulation()
        for i in range(3):
            pop.add(program(i))
        resolve(answer, population=pop, known=strategy.known, k=2, labels=default_labels())


async def test_strategy_containers_are_hardened_and_removed_on_close(
    docker_factory: StrategyFactory,
) -> None:
    strategy = await deploy(
        docker_factory, seed_source(), ContainerLimits(memory_mb=256, cpus=0.5, pids=24)
    )
    transport = strategy.client.transport
    container = transport.session.container  # type: ignore[attr-defined]
    try:
        container.reload()
        host = container.attrs["HostConfig"]
        config = container.attrs["Config"]
        assert host["NetworkMode"] == "none"
        assert host["ReadonlyRootfs"] is True
        assert host["CapDrop"] == ["ALL"] and not host["CapAdd"]
        assert any("no-new-privileges" in opt for opt in host["SecurityOpt"])
        assert host["Memory"] == host["MemorySwap"] == 256 << 20
        assert host["PidsLimit"] == 24 and host["NanoCpus"] == 500_000_000
        assert host["Privileged"] is False and not host.get("Binds")
        assert config["User"] == "65534:65534"
        assert config["Labels"]["galapagos.role"] == "strategy"
        assert "galapagos.owner" in config["Labels"]
        assert not any(k.startswith(("OPENAI", "GALAPAGOS_TEST")) for k in config["Env"])
    finally:
        await strategy.close()
    client = docker.from_env()
    try:
        with pytest.raises(docker.errors.NotFound):
            client.containers.get(container.id)
    finally:
        client.close()


async def test_a_missed_deadline_kills_the_container(
    docker_factory: StrategyFactory,
) -> None:
    hang = module(sample="while True:\n    pass")
    strategy = await deploy(docker_factory, hang, ContainerLimits(call_s=1.0))
    container = strategy.client.transport.session.container  # type: ignore[attr-defined]
    try:
        await strategy.add([program(0)])
        with pytest.raises(StrategyError) as info:
            await strategy.sample(1)
        assert info.value.kind == "timeout"
        container.reload()
        assert container.status in ("exited", "dead")
        with pytest.raises(StrategyError):  # the transport stays dead
            await strategy.sample(1)
    finally:
        await strategy.close()


async def test_the_seed_strategy_passes_valid_in_docker(
    docker_factory: StrategyFactory,
) -> None:
    report = await valid_source(seed_source(), docker_factory)
    assert report.passed, report.feedback()
