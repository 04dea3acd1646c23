"""/api/v1/runs/{id}/programs, lineage, events since a sequence number, and the live stream."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.sse import EventSourceResponse, ServerSentEvent

from harness.core.redact import redact_text
from harness.runs import run_status
from harness.service.auth import Caller
from harness.service.deps import READ_RESPONSES, hub_of, require_read
from harness.service.hub import Hub
from harness.service.schemas import EventsOut, LineageOut, ProgramOut, ProgramSummary, finite
from harness.service.views import ACTIVE, lineage, program_detail, program_summary, redacted

router = APIRouter(prefix="/api/v1/runs/{run_id}", tags=["programs"])

Reader = Annotated[Caller, Depends(require_read)]


@router.get("/programs", response_model=list[ProgramSummary], responses=READ_RESPONSES)
def list_programs(
    run_id: str,
    request: Request,
    _: Reader,
    order: Annotated[str, Query(pattern="^(iteration|score)$")] = "iteration",
    limit: Annotated[int, Query(ge=1, le=100_000)] = 1000,
) -> list[dict[str, Any]]:
    """A run's programs (without code), by iteration or best score first."""
    store = hub_of(request).reader()
    run = store.get_run(run_id)
    programs = store.programs(run.id)
    if order == "score":
        programs.sort(key=lambda p: p.score, reverse=True)
    return [program_summary(p) for p in programs[:limit]]


@router.get("/programs/{program_id}", response_model=ProgramOut, responses=READ_RESPONSES)
def get_program(run_id: str, program_id: str, request: Request, _: Reader) -> dict[str, Any]:
    """Code, metrics, evaluation results (limits hit), diff to the parent, children, and the
    LLM calls of its iteration."""
    store = hub_of(request).reader()
    return program_detail(store, store.get_run(run_id), program_id)


@router.get("/lineage", response_model=LineageOut, responses=READ_RESPONSES)
def get_lineage(run_id: str, request: Request, _: Reader) -> dict[str, Any]:
    store = hub_of(request).reader()
    return lineage(store, store.get_run(run_id))


@router.get("/events", response_model=EventsOut, responses=READ_RESPONSES)
def get_events(
    run_id: str,
    request: Request,
    _: Reader,
    after: Annotated[int, Query(ge=-1, le=2**62)] = -1,
    kind: Annotated[str | None, Query(max_length=64)] = None,
    limit: Annotated[int, Query(ge=1, le=10_000)] = 1000,
) -> dict[str, Any]:
    """Events with a sequence number above ``after`` (read on from ``last_seq``)."""
    store = hub_of(request).reader()
    run = store.get_run(run_id)
    events = store.events_after(run.id, after, limit=limit)
    last = events[-1].seq if events else max(after, -1)
    shown = [e for e in events if kind is None or e.kind == kind]
    return {
        "run_id": run.id,
        "events": [finite(redacted(_event(e))) for e in shown],
        "last_seq": last,
    }


def _event(e: Any) -> dict[str, Any]:
    return {
        "seq": e.seq,
        "iteration": e.iteration,
        "kind": e.kind,
        "payload": dict(e.payload),
        "created_at": e.created_at,
    }


def _progress(hub: Hub, run_id: str) -> dict[str, Any]:
    store = hub.reader()
    run = store.get_run(run_id)
    return finite(
        {
            "run_id": run.id,
            "status": run_status(run),
            "iterations_done": run.iterations_done,
            "max_iterations": run.max_iterations,
            "seed_score": run.seed_score,
            "best_score": run.best_score,
            "best_program_id": run.best_program_id,
            "tokens": run.tokens,
            "cost": run.cost,
            "error": redact_text(run.error or ""),
            "history": store.score_history(run.id),
            "program_count": store.program_count(run.id),
            "usage_by_model": store.llm_usage(run.id)["by_model"],
            "last_seq": store.last_seq(run.id),
        }
    )


def _events_after(hub: Hub, run_id: str, seq: int) -> list[Any]:
    return hub.reader().events_after(run_id, seq, limit=500)


def _stream_target(run_id: str, request: Request, _: Reader) -> str:
    return hub_of(request).reader().get_run(run_id).id  # 404 before the stream starts


async def _stream_slot(request: Request, who: Reader) -> AsyncIterator[None]:
    """A live-stream slot of the caller's (429 past the caps), given back when it ends."""
    live = hub_of(request).live
    live.open_stream(who.client)
    try:
        yield
    finally:
        live.close_stream(who.client)


#: Largest sequence number a client may name (events are numbered from 0 in one run).
_MAX_SEQ = 2**62


def _resume_from(after: int, last_event_id: str | None) -> int:
    """Where a stream starts: ``after``, or a reconnecting browser's ``Last-Event-ID`` when it
    is a plain sequence number (anything else is ignored, as the SSE spec lets a server do)."""
    value = (last_event_id or "").strip()
    if value.isascii() and value.isdigit() and len(value) <= 19 and int(value) <= _MAX_SEQ:
        return max(after, int(value))
    return after


@router.get(
    "/stream",
    response_class=EventSourceResponse,
    responses={**READ_RESPONSES, 429: {"description": "Too many live streams (Retry-After)."}},
    summary="Live progress (server-sent events)",
    dependencies=[Depends(_stream_slot)],
)
async def stream(
    request: Request,
    target: Annotated[str, Depends(_stream_target)],
    after: Annotated[int, Query(ge=-1, le=_MAX_SEQ)] = -1,
    last_event_id: Annotated[str | None, Header()] = None,
) -> AsyncIterator[ServerSentEvent]:
    """``event`` messages (id = sequence number) as the run commits, ``progress`` after each
    change (status, best, tokens, the best-so-far curve), ``end`` when the run is over."""
    hub = hub_of(request)
    seq = _resume_from(after, last_event_id)
    shown_state: tuple[Any, ...] | None = None
    while True:
        # Progress first: a run is over only after its last commit, so the events read next
        # include everything it wrote when the status read says it ended.
        progress = await hub.live.snapshot(target, lambda: _progress(hub, target))
        events: list[Any] = []
        if progress["last_seq"] > seq:
            events = await asyncio.to_thread(_events_after, hub, target, seq)
        for event in events:
            seq = event.seq
            yield ServerSentEvent(
                event="event", id=str(event.seq), data=finite(redacted(_event(event)))
            )
        state = (
            progress["status"],
            progress["iterations_done"],
            progress["best_score"],
            progress["tokens"],
        )
        if state != shown_state:
            shown_state = state
            yield ServerSentEvent(event="progress", data=progress)
        if progress["status"] not in ACTIVE and len(events) < 500:
            yield ServerSentEvent(event="end", data={"status": progress["status"]})
            return
        if len(events) < 500 and await hub.live.wait(target, hub.settings.poll_s):
            return  # the server is stopping
