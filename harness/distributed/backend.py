"""``RayBackend``: a run's evaluations fanned out over the cluster's nodes.

The run's loop stays on the driver; every sandbox job goes to the least loaded node with a free
slot (each node's capacity comes from its resources, see :mod:`harness.distributed.cluster`),
whose agent runs it in a fresh container of that node's warm pool.  The job crosses the network
as plain data without its task files: those are put in Ray's object store once per run and
travel by reference, fetched by each node once.

A node lost mid-job (its agent died: the node left, crashed or was killed) is an
infrastructure fault, not the candidate's: the job is sent again to another node and its result
says what it survived (``infra_retries``).  The controller sees one result per job, so nothing
is charged or counted twice.  With no Galapagos node left the run stops as interrupted
(:class:`~harness.core.errors.EngineUnavailable`), resumable.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from harness.core.errors import HarnessError, SandboxError
from harness.core.records import EvalResult
from harness.distributed.cluster import Cluster, Node
from harness.sandbox.images import image_tag
from harness.sandbox.protocol import Job

__all__ = ["RayBackend"]

#: Nodes one job may lose before it is an error.
NODE_RETRIES = 3


class RayBackend:
    """Runs jobs on the cluster's nodes (see the module docstring).  ``options`` are the run's
    evaluator settings the nodes apply (pool size, engine wait, canaries)."""

    name = "docker"

    def __init__(self, cluster: Cluster, options: Mapping[str, Any]) -> None:
        self.cluster = cluster
        self.ray = cluster.ray
        self.options = dict(options)
        #: id of a files mapping → (the mapping, kept alive; its object ref).
        self._refs: dict[int, tuple[Mapping[str, bytes], Any]] = {}
        self._ready: set[str] = set()
        #: Jobs per node address (what this backend sent where).
        self.placed: dict[str, int] = {}
        #: Jobs sent again after their node was lost.
        self.retried = 0

    def _files(self, job: Job) -> list[Any]:
        kept = self._refs.get(id(job.files))
        if kept is None or kept[0] is not job.files:
            kept = (job.files, self.ray.put(dict(job.files)))
            if len(self._refs) > 64:
                self._refs.clear()
            self._refs[id(job.files)] = kept
        return [kept[1]]  # in a list: Ray hands the node the reference, not the bytes

    async def _prepare(self, node: Node, job: Job) -> None:
        """The node's canaries and image, once per node and driver: the node must run the
        image this host's recipes name (the same content hash), else it runs other code."""
        if node.node_id not in self._ready:
            node.info = await node.actor.ready.remote(self.options, job.image)
            expected = image_tag(job.image)
            if node.info.get("image") != expected:
                raise SandboxError(
                    f"Ray node {node.label} runs sandbox image {node.info.get('image')}, this "
                    f"host's recipes make {expected}: install the same Galapagos version on "
                    "every node (pip install 'galapagos[ray]==…')"
                )
            self._ready.add(node.node_id)

    async def run(self, job: Job) -> EvalResult:
        slim = dataclasses.replace(job, files={})
        files = self._files(job)
        faults: list[str] = []
        tried: set[str] = set()
        while True:
            node = await self.cluster.acquire(exclude=tried)
            try:
                await self._prepare(node, job)
                result: EvalResult = await node.actor.run.remote(self.options, slim, files)
            except self.ray.exceptions.RayActorError as exc:
                why = f"Ray node {node.label} was lost during the job ({_first_line(exc)})"
                await self.cluster.lost(node, why)
                tried.add(node.node_id)
                faults.append(why)
                self.retried += 1
                if len(faults) > NODE_RETRIES:
                    raise SandboxError(
                        f"{len(faults)} nodes lost on one evaluation; last: {why}"
                    ) from exc
                continue
            except self.ray.exceptions.RayTaskError as exc:
                cause = getattr(exc, "cause", None)
                if isinstance(cause, HarnessError):
                    raise cause from exc
                raise SandboxError(f"the node agent on {node.label} failed: {exc}") from exc
            finally:
                await self.cluster.release(node)
            self.placed[node.label] = self.placed.get(node.label, 0) + 1
            if faults:
                return dataclasses.replace(result, infra_retries=(*result.infra_retries, *faults))
            return result

    async def prewarm(self, job: Job, demand: int | None = None) -> None:
        """Every node starts warming containers for this run's jobs (does not wait long);
        ``demand`` (jobs at once) is shared among the nodes."""
        files = self._files(job)
        slim = dataclasses.replace(job, files={})
        nodes = list(self.cluster.nodes)
        share = None if demand is None else max(1, -(-demand // max(1, len(nodes))))
        for node in nodes:
            try:
                await self._prepare(node, job)
                await node.actor.prewarm.remote(self.options, slim, files, share)
            except self.ray.exceptions.RayActorError as exc:
                await self.cluster.lost(node, _first_line(exc))

    def release_run(self, run_id: str) -> None:
        """The run ended: every node drops its warm containers (fire and forget)."""
        for node in self.cluster.nodes:
            node.actor.release.remote(run_id)

    async def aclose(self) -> None:
        self._refs.clear()


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
