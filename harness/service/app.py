"""``create_app(store, settings)``: the hub's FastAPI application (API under /api/v1 + pages)."""

from __future__ import annotations

import asyncio
import importlib.metadata
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

from harness.service import problems
from harness.service._middleware import (
    BodyLimit,
    HostCheck,
    SecretMask,
    SecurityHeaders,
    secrets_of,
)
from harness.service._openapi import finish_openapi
from harness.service.hub import Hub
from harness.service.routers import catalog, cluster, leaderboard, pages, programs, runs
from harness.service.settings import ServiceSettings
from harness.store.sqlite import SQLiteStore

__all__ = ["create_app"]

STATIC = Path(__file__).parent / "static"


def _version() -> str:
    try:
        return importlib.metadata.version("galapagos")
    except importlib.metadata.PackageNotFoundError:
        return "0"


def plotly_js() -> Path:
    """plotly.js as the plotly wheel ships it (served locally: the hub uses no CDN)."""
    import plotly

    return Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


def create_app(store: SQLiteStore, settings: ServiceSettings | None = None) -> FastAPI:
    """The hub over ``store`` (its writer: the run queue commits through it)."""
    settings = settings or ServiceSettings()
    hub = Hub(store, settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        hub.live.bind(asyncio.get_running_loop())
        hub.queue.start()
        try:
            yield
        finally:
            hub.live.close()
            await asyncio.to_thread(hub.queue.stop, settings.shutdown_grace_s)
            hub.close()

    app = FastAPI(
        title="Galapagos hub",
        version=_version(),
        summary="Runs, programs, lineage, live progress, scaffolds, blocks, tasks, leaderboard.",
        openapi_url="/api/v1/openapi.json",
        docs_url=None,  # Swagger UI and ReDoc load from CDNs; the Docs page lists the API
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.hub = hub
    # Outermost last: the Host check answers before anything else runs.
    needles = secrets_of(settings.api_base)
    if needles:
        app.add_middleware(SecretMask, needles=needles)
    app.add_middleware(SecurityHeaders)
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes)
    app.add_middleware(HostCheck, allowed=settings.allowed_hosts)
    problems.install(app, lambda path: _allowed_methods(app, path), pages.error_page)

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/static-vendor/plotly.min.js", include_in_schema=False)
    def plotly_bundle() -> FileResponse:
        return FileResponse(
            plotly_js(),
            media_type="text/javascript",
            headers={"Cache-Control": "public, max-age=86400"},
        )

    for module in (runs, programs, catalog, leaderboard, cluster):
        app.include_router(module.router)
    app.include_router(pages.router)
    app.openapi = finish_openapi(app)  # type: ignore[method-assign]
    return app


def _allowed_methods(app: FastAPI, path: str) -> list[str]:
    methods: set[str] = set()
    for template, operations in app.openapi().get("paths", {}).items():
        pattern = re.sub(r"\\{[^/]+\\}", "[^/]+", re.escape(template))
        if re.fullmatch(pattern, path):
            methods.update(m.upper() for m in operations)
    return sorted(methods)
