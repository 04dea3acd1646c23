"""/api/v1/benchmarks and /api/v1/leaderboard, and /api/v1/status."""

from __future__ import annotations

import importlib.metadata
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query, Request

from harness.core.errors import ConfigError
from harness.service.auth import Caller
from harness.service.deps import READ_RESPONSES, hub_of, require_read
from harness.service.schemas import BenchmarkOut, LeaderboardOut, StatusOut
from harness.service.views import benchmark_board, benchmarks

router = APIRouter(prefix="/api/v1", tags=["leaderboard"])

Reader = Annotated[Caller, Depends(require_read)]


@router.get("/benchmarks", response_model=list[BenchmarkOut], responses=READ_RESPONSES)
def list_benchmarks(request: Request, _: Reader) -> list[dict[str, Any]]:
    """Benchmarks in the store (``galapagos bench``), newest first."""
    return benchmarks(hub_of(request).reader())


@router.get(
    "/leaderboard",
    response_model=LeaderboardOut,
    responses={**READ_RESPONSES, 404: {"description": "No such benchmark."}},
)
def get_leaderboard(
    request: Request,
    _: Reader,
    benchmark: Annotated[str | None, Query(max_length=100)] = None,
    task: Annotated[str | None, Query(max_length=128)] = None,
) -> dict[str, Any]:
    """A benchmark's table (default: the newest): per scaffold x task the best, mean and std
    over seeds, the gap to the best known, iterations to 99 %, ranks; and its cells."""
    try:
        return benchmark_board(hub_of(request).reader(), benchmark, task)
    except ConfigError as exc:
        raise HTTPException(404, str(exc)) from None


@router.get("/status", response_model=StatusOut, responses=READ_RESPONSES)
def status(request: Request, who: Reader) -> dict[str, Any]:
    """The hub: version, whether reads are public, whether you are logged in, the queue."""
    hub = hub_of(request)
    try:
        version = importlib.metadata.version("galapagos")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    return {
        "version": version,
        "public_read": hub.settings.public_read,
        "authenticated": who.authenticated,
        "tokens_exist": hub.db.active_tokens() > 0,
        "workers": hub.queue.workers,
        "running": sorted(hub.queue.running()),
        "queued": hub.db.queued_count(),
    }
