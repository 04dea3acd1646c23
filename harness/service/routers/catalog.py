"""/api/v1/scaffolds, /api/v1/blocks, /api/v1/tasks: what can be run."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query, Request

from harness.core.errors import TaskError
from harness.service import catalog
from harness.service.auth import Caller
from harness.service.deps import READ_RESPONSES, hub_of, require_read
from harness.service.schemas import BlockOut, ScaffoldOut, TaskOut

router = APIRouter(prefix="/api/v1", tags=["catalog"])

Reader = Annotated[Caller, Depends(require_read)]


@router.get("/scaffolds", response_model=list[ScaffoldOut], responses=READ_RESPONSES)
def list_scaffolds(_: Reader) -> list[dict[str, Any]]:
    """Every shipped scaffold: card, composition of six named blocks, defaults, files."""
    return [catalog.scaffold(name) for name in catalog.scaffold_names()]


@router.get("/scaffolds/{name}", response_model=ScaffoldOut, responses=READ_RESPONSES)
def get_scaffold(name: str, _: Reader) -> dict[str, Any]:
    return catalog.scaffold(name)


@router.get("/blocks", response_model=list[BlockOut], responses=READ_RESPONSES)
def list_blocks(
    _: Reader, slot: Annotated[str | None, Query(pattern=f"^({'|'.join(catalog.SLOTS)})$")] = None
) -> list[dict[str, Any]]:
    """The named blocks per slot a composition can use."""
    return catalog.blocks(slot)


@router.get("/tasks", response_model=list[TaskOut], responses=READ_RESPONSES)
def list_tasks(request: Request, _: Reader) -> list[dict[str, Any]]:
    """Tasks in the hub's roots: card, best known value, best score a stored run reached."""
    hub = hub_of(request)
    return catalog.tasks(hub.tasks, hub.reader())


@router.get("/tasks/{name}", response_model=TaskOut, responses=READ_RESPONSES)
def get_task(name: str, request: Request, _: Reader) -> dict[str, Any]:
    hub = hub_of(request)
    try:
        return catalog.task(hub.tasks, hub.reader(), name)
    except TaskError as exc:
        raise HTTPException(404, str(exc)) from None
