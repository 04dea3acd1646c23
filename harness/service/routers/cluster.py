"""/api/v1/cluster: the Ray cluster the hub's queue runs on, and each node's load."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request

from harness.service.auth import Caller
from harness.service.deps import READ_RESPONSES, hub_of, require_read

router = APIRouter(prefix="/api/v1", tags=["cluster"])

Reader = Annotated[Caller, Depends(require_read)]


@router.get("/cluster", responses=READ_RESPONSES)
def cluster_load(request: Request, _: Reader) -> dict[str, Any]:
    """Per node: address, capacity (containers at once), evaluation jobs and runs in flight,
    jobs done, containers created, canary runs; ``nodes`` is empty when the hub runs its queue
    on this machine (no ``--ray-address``)."""
    queue = hub_of(request).queue
    return {"ray_address": queue.ray_address, "nodes": queue.cluster_load()}
