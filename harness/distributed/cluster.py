"""The driver's view of a Ray cluster: its Galapagos nodes, one agent actor each.

A node takes Galapagos work only if it declares the custom resource ``galapagos`` (``ray start
… --resources='{"galapagos": 1}'``): the operator says which nodes have a Docker engine fit to
run candidates.  Its capacity (containers doing work at once) is its ``galapagos_slots``
resource if given, else two per CPU, as :func:`harness.runtime.default_max_containers` on one
machine.  The agent actors are named per node (and per Galapagos build) in the ``galapagos``
namespace and detached, so every driver (a benchmark, the hub) shares one agent, and so one
Runtime, per node.

Ray's usage statistics are turned off before Ray is imported; Ray 2.60 clusters use token
authentication by default (see docs/scale-out.md for what a real deployment adds).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.core.errors import ConfigError, EngineUnavailable, SandboxUnavailable

if TYPE_CHECKING:
    from harness.distributed.backend import RayBackend

__all__ = ["NAMESPACE", "NODE_RESOURCE", "Cluster", "Node", "connect", "ray_module"]

log = logging.getLogger(__name__)

NODE_RESOURCE = "galapagos"
SLOTS_RESOURCE = "galapagos_slots"
NAMESPACE = "galapagos"
#: When a surviving agent reaps what a lost node's agent left (seconds after the loss, spaced;
#: a dead agent's processes took over 5 s to go on a loaded 2-core machine).
REAP_AFTER_LOSS_S = (0.0, 2.0, 5.0, 10.0, 20.0)


def ray_module() -> Any:
    """``ray``, imported with usage statistics off; a clear error without the extra."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    try:
        import ray
    except ImportError as exc:
        raise ConfigError(
            "--ray-address needs Ray: pip install 'galapagos[ray]' (on the driver and on every "
            "node)"
        ) from exc
    return ray


def connect(address: str) -> None:
    """Join the cluster at ``address`` (``host:port``, ``ray://…`` or ``auto``) as a driver."""
    ray = ray_module()
    if ray.is_initialized():
        return
    try:
        ray.init(address=address, namespace=NAMESPACE, log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise SandboxUnavailable(
            f"cannot reach the Ray cluster at {address} ({exc}); start it (ray start --head …) "
            "or check --ray-address"
        ) from exc


def agent_build() -> str:
    """What names this Galapagos build in agent names: an agent left running by another
    version (agents are detached) is not reused; it idles until the cluster stops."""
    import hashlib
    from importlib.metadata import PackageNotFoundError, version

    from harness.sandbox.images import image_tag

    try:
        release = version("galapagos")
    except PackageNotFoundError:
        release = "dev"
    code = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        code.update(path.read_bytes())
    # The image tag hashes the in-container runtime and the recipes.
    code.update(image_tag("python-eval").encode())
    return f"{release}-{code.hexdigest()[:10]}"


@dataclass
class Node:
    """One Galapagos node as the driver sees it."""

    node_id: str
    address: str
    capacity: int
    actor: Any
    inflight: int = 0
    #: Whole runs this driver placed on it that are executing.
    runs: int = 0
    #: Jobs this driver sent it that returned.
    done: int = 0
    alive: bool = True
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """``address/node id``: simulated nodes share one address."""
        return f"{self.address}/{self.node_id[:8]}"


class Cluster:
    """The Galapagos nodes of the cluster this process is connected to (see the module
    docstring); ``slots`` overrides every node's capacity."""

    def __init__(self, address: str | None = None, *, slots: int | None = None) -> None:
        self.address = address
        if address is not None:
            connect(address)
        self.ray = ray_module()
        if not self.ray.is_initialized():
            raise ConfigError("not connected to a Ray cluster: pass --ray-address")
        self.slots = slots
        self._nodes: dict[str, Node] = {}
        self._changed: asyncio.Condition | None = None
        self._stores: dict[str, Any] = {}
        self._reaps: set[asyncio.Task[None]] = set()
        #: Nodes lost while this driver used them: (address, why).
        self.lost_nodes: list[tuple[str, str]] = []
        self.refresh()

    def refresh(self) -> list[Node]:
        """Find the live Galapagos nodes; start (or find) each one's agent."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from harness.distributed.node import NodeAgent

        live = {
            n["NodeID"]: n
            for n in self.ray.nodes()
            if n.get("Alive") and n.get("Resources", {}).get(NODE_RESOURCE)
        }
        for node_id, node in list(self._nodes.items()):
            if node_id not in live and node.alive:
                self._mark_lost(node, "the node left the cluster")
        agent = self.ray.remote(NodeAgent)
        build = agent_build()
        for node_id, info in live.items():
            known = self._nodes.get(node_id)
            if known is not None and known.alive:
                continue
            resources = info.get("Resources", {})
            capacity = self.slots or int(
                resources.get(SLOTS_RESOURCE) or max(1, 2 * int(resources.get("CPU", 1) or 1))
            )
            actor = agent.options(
                name=f"galapagos-node-{node_id[:16]}-{build}",
                namespace=NAMESPACE,
                get_if_exists=True,
                lifetime="detached",
                num_cpus=0,
                max_concurrency=1000,
                max_restarts=0,
                scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False),
            ).remote(capacity)
            self._nodes[node_id] = Node(
                node_id, info.get("NodeManagerAddress", "?"), capacity, actor
            )
        return self.nodes

    @property
    def nodes(self) -> list[Node]:
        return [n for n in self._nodes.values() if n.alive]

    @property
    def capacity(self) -> int:
        return sum(n.capacity for n in self.nodes)

    def _condition(self) -> asyncio.Condition:
        if self._changed is None:
            self._changed = asyncio.Condition()
        return self._changed

    def _mark_lost(self, node: Node, why: str) -> None:
        if node.alive:
            node.alive = False
            self.lost_nodes.append((node.label, why))
            log.warning("Ray node %s lost: %s", node.label, why)

    async def lost(self, node: Node, why: str) -> None:
        """``node``'s agent died: stop using it, look for nodes again, and have a surviving
        agent reap what the dead one left on its engine (on a simulated cluster all nodes
        share one engine; on a real one the lost node's containers went with it)."""
        self._mark_lost(node, why)
        await asyncio.to_thread(self.refresh)
        # The dead agent's processes may take a moment to go: reap now and again shortly.
        task = asyncio.get_running_loop().create_task(self._reap(REAP_AFTER_LOSS_S))
        self._reaps.add(task)
        task.add_done_callback(self._reaps.discard)
        async with self._condition():
            self._condition().notify_all()

    async def _reap(self, delays: tuple[float, ...]) -> None:
        for delay in delays:
            await asyncio.sleep(delay)
            for survivor in self.nodes:
                try:
                    await survivor.actor.reap.remote()
                    break
                except self.ray.exceptions.RayActorError:
                    continue

    async def acquire(self, exclude: set[str] | None = None) -> Node:
        """The least loaded live node with a free slot (waits for one); raises
        :class:`EngineUnavailable` when no node is left."""
        async with self._condition():
            while True:
                nodes = [n for n in self.nodes if n.node_id not in (exclude or set())]
                nodes = nodes or self.nodes  # a retry may go back to a node if it is the last
                if not nodes:
                    raise EngineUnavailable(
                        "no Galapagos node is left in the Ray cluster (nodes need the "
                        f"'{NODE_RESOURCE}' resource); add one and continue the run with "
                        "galapagos resume"
                    )
                free = [n for n in nodes if n.inflight < n.capacity]
                if free:
                    node = min(free, key=lambda n: (n.inflight / n.capacity, n.done))
                    node.inflight += 1
                    return node
                await self._condition().wait()

    async def release(self, node: Node) -> None:
        async with self._condition():
            node.inflight -= 1
            node.done += 1
            self._condition().notify_all()

    async def acquire_run(self) -> Node:
        """The live node running the fewest whole runs for its capacity."""
        nodes = self.nodes
        if not nodes:
            await asyncio.to_thread(self.refresh)
            nodes = self.nodes
        if not nodes:
            raise EngineUnavailable(
                "no Galapagos node is left in the Ray cluster (nodes need the "
                f"'{NODE_RESOURCE}' resource); add one and continue with the same command"
            )
        node = min(nodes, key=lambda n: (n.runs / n.capacity, n.done))
        node.runs += 1
        return node

    def release_run(self, node: Node) -> None:
        node.runs -= 1
        node.done += 1

    def backend(self, options: dict[str, Any]) -> RayBackend:
        """A backend fanning evaluations out over these nodes (see :class:`RayBackend`)."""
        from harness.distributed.backend import RayBackend

        return RayBackend(self, options)

    def store_actor(self, path: Path) -> Any:
        """The head's store actor for the store at ``path`` (one per path, on this node)."""
        from harness.distributed.store import start_store_actor

        key = str(Path(path).resolve())
        actor = self._stores.get(key)
        if actor is None:
            actor = self._stores[key] = start_store_actor(Path(key))
        return actor

    def close(self) -> None:
        """Stop this driver's store actors (the node agents stay: other drivers share them)."""
        for actor in self._stores.values():
            with contextlib.suppress(Exception):
                self.ray.kill(actor)
        self._stores.clear()

    async def load(self) -> list[dict[str, Any]]:
        """Per node: address, capacity, jobs in flight, runs and containers (the agent's own
        figures; a node that does not answer is shown as lost)."""
        out = []
        for node in list(self._nodes.values()):
            row: dict[str, Any] = {
                "node": node.node_id[:12],
                "address": node.address,
                "capacity": node.capacity,
                "inflight": node.inflight,
                "runs_placed": node.runs,
                "done": node.done,
                "alive": node.alive,
            }
            if node.alive:
                try:
                    row.update(await node.actor.load.remote())
                except self.ray.exceptions.RayActorError as exc:
                    await self.lost(node, str(exc).splitlines()[0])
                    row["alive"] = False
            out.append(row)
        return out
