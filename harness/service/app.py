"""``create_app(store, settings)``: the hub's FastAPI application (API under /api/v1 + pages)."""

from __future__ import annotations

import asyncio
import importlib.metadata
import logging
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from harness.core.errors import ConfigError, HarnessError, RunNotFound, TaskError
from harness.service._middleware import BodyLimit, SecurityHeaders
from harness.service.hub import Conflict, Hub
from harness.service.routers import catalog, cluster, leaderboard, pages, programs, runs
from harness.service.settings import ServiceSettings
from harness.store.sqlite import SQLiteStore

__all__ = ["create_app"]

log = logging.getLogger("galapagos.service")
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
    app.add_middleware(SecurityHeaders)
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes)

    @app.exception_handler(HarnessError)
    async def harness_error(request: Request, exc: HarnessError) -> Response:
        if isinstance(exc, RunNotFound):
            code = 404
        elif isinstance(exc, Conflict):
            code = 409
        elif isinstance(exc, ConfigError | TaskError):
            code = 400
        else:
            log.error("%s on %s %s: %s", type(exc).__name__, request.method, request.url.path, exc)
            code = 500
        message = api_wording(str(exc))
        if _wants_html(request):
            return pages.error_page(request, code, message)
        return JSONResponse({"detail": message}, status_code=code)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 405 and not _wants_html(request):
            # Included routers answer 405 with the methods of the first route that matched
            # the path only; say every method the path has.
            allowed = _allowed_methods(app, request.url.path)
            return JSONResponse(
                {"detail": "Method Not Allowed"},
                status_code=405,
                headers={"Allow": ", ".join(allowed)},
            )
        if _wants_html(request):
            if exc.status_code == 401 and request.method == "GET":
                return RedirectResponse(f"/login?next={request.url.path}", status_code=303)
            return pages.error_page(request, exc.status_code, str(exc.detail))
        return JSONResponse(
            {"detail": exc.detail}, status_code=exc.status_code, headers=exc.headers
        )

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
    return app


#: The library's messages name CLI flags; over the API the same fields have these names.
_API_WORDS = (
    ("--iterations", "iterations"),
    ("--max-tokens", "max_total_tokens"),
    ("--max-cost", "max_cost"),
    ("--seed", "seed"),
    ("--set ", "override "),
    ("pass --scaffold NAME", "give scaffold"),
    ("list runs with `galapagos runs`", "see GET /api/v1/runs"),
)


def api_wording(message: str) -> str:
    """A library error as an API client should read it (field names, not CLI flags)."""
    for cli, api in _API_WORDS:
        message = message.replace(cli, api)
    return message


def _allowed_methods(app: FastAPI, path: str) -> list[str]:
    methods: set[str] = set()
    for template, operations in app.openapi().get("paths", {}).items():
        pattern = re.sub(r"\\{[^/]+\\}", "[^/]+", re.escape(template))
        if re.fullmatch(pattern, path):
            methods.update(m.upper() for m in operations)
    return sorted(methods)


def _wants_html(request: Request) -> bool:
    return not request.url.path.startswith("/api/")
