"""/api/v1/runs: create (queue), list, get, cancel, resume."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query, Request, Response

from harness.runs import run_status
from harness.service.auth import Caller
from harness.service.deps import AUTH_RESPONSES, READ_RESPONSES, hub_of, require_read, require_write
from harness.service.hub import LaunchRequest
from harness.service.schemas import CancelOut, LaunchIn, LaunchOut, ResumeIn, RunOut
from harness.service.views import run_view

router = APIRouter(prefix="/api/v1/runs", tags=["runs"])

Status = Literal["queued", "running", "completed", "interrupted", "failed", "budget_exhausted"]


@router.get("", response_model=list[RunOut], responses=READ_RESPONSES)
def list_runs(
    request: Request,
    _: Annotated[Caller, Depends(require_read)],
    status: Status | None = None,
    task: Annotated[str | None, Query(max_length=128)] = None,
    scaffold: Annotated[str | None, Query(max_length=64)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> list[dict[str, object]]:
    """Stored runs, newest first, optionally filtered."""
    store = hub_of(request).reader()
    out = []
    filtered = bool(status or task or scaffold)
    for run in store.list_runs(limit=None if filtered else limit):
        if status and run_status(run) != status:
            continue
        if (task and run.task != task) or (scaffold and run.scaffold != scaffold):
            continue
        out.append(run_view(store, run))
        if len(out) >= limit:
            break
    return out


@router.post("", response_model=LaunchOut, status_code=201, responses=AUTH_RESPONSES)
def create_run(
    body: LaunchIn, request: Request, who: Annotated[Caller, Depends(require_write)]
) -> dict[str, object]:
    """Queue a run of a scaffold (by name) or a composition of blocks on a task."""
    hub = hub_of(request)
    run, notes = hub.launch(
        LaunchRequest(
            task=body.task,
            scaffold=body.scaffold,
            composition=body.composition.model_dump() if body.composition else None,
            iterations=body.iterations,
            seed=body.seed,
            overrides=tuple(body.overrides),
        ),
        who.token,
    )
    return {"run": run_view(hub.reader(), run), "notes": notes}


@router.get("/{run_id}", response_model=RunOut, responses=READ_RESPONSES)
def get_run(
    run_id: str, request: Request, _: Annotated[Caller, Depends(require_read)]
) -> dict[str, object]:
    store = hub_of(request).reader()
    return run_view(store, store.get_run(run_id))


@router.post("/{run_id}/cancel", response_model=CancelOut, responses=AUTH_RESPONSES)
def cancel_run(
    run_id: str, request: Request, who: Annotated[Caller, Depends(require_write)]
) -> dict[str, str]:
    """Stop a running run after its iteration in flight, or drop a queued one (both stay
    resumable)."""
    hub = hub_of(request)
    run = hub.store.get_run(run_id)
    return {"run_id": run.id, "outcome": hub.cancel(run.id, who.token)}


@router.post("/{run_id}/resume", response_model=RunOut, status_code=202, responses=AUTH_RESPONSES)
def resume_run(
    run_id: str,
    request: Request,
    response: Response,
    who: Annotated[Caller, Depends(require_write)],
    body: ResumeIn | None = None,
) -> dict[str, object]:
    """Queue a stopped run to continue exactly; optionally extend it or raise its budget."""
    hub = hub_of(request)
    options = (body or ResumeIn()).model_dump()
    run = hub.resume(run_id, options, who.token)
    return run_view(hub.reader(), run)
