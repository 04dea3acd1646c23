"""Every error the hub answers is a problem document (RFC 9457), and no client input makes it
answer 5xx.

One exception handler per kind: the library's errors (400, 403, 404, 409, 429 by class),
HTTP errors, request validation (422, the invalid fields without echoing their values: a value
may be ``NaN`` or a lone surrogate that JSON cannot carry back), and a last one for bugs
(500, logged, no traceback to the client).  Bodies are ASCII JSON, so any text a message
quotes can be sent.  Pages (paths outside ``/api/``) get the same status as an HTML page.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import RedirectResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from harness.core.errors import ConfigError, HarnessError, RunNotFound, TaskError
from harness.core.redact import redact_text
from harness.service.hub import Conflict, Forbidden, OverQuota
from harness.service.live import StreamsFull
from harness.service.policy import PolicyRefused

__all__ = ["MEDIA_TYPE", "install", "problem"]

MEDIA_TYPE = "application/problem+json"
log = logging.getLogger("galapagos.service")

#: Messages the library words for the CLI outside planning (budget stops, a folder's notes, a
#: missing run); planning itself names the API's fields (``API_NAMES``).  Over the API the
#: same fields have these names.
_API_WORDS = (
    ("--iterations", "iterations"),
    ("--max-tokens", "max_total_tokens"),
    ("--max-cost", "max_cost"),
    ("--seed", "seed"),
    ("--set ", "override "),
    ("list runs with `galapagos runs`", "see GET /api/v1/runs"),
)


def api_wording(message: str) -> str:
    """A library error as an API client should read it (field names, not CLI flags)."""
    for cli, api in _API_WORDS:
        message = message.replace(cli, api)
    return message


def _text(message: Any) -> str:
    """One printable line: credentials redacted, no lone surrogates."""
    text = str(message).encode("utf-8", "backslashreplace").decode("utf-8")
    return redact_text(text)


def problem(
    status: int,
    detail: str,
    *,
    headers: Mapping[str, str] | None = None,
    errors: list[dict[str, Any]] | None = None,
) -> Response:
    body: dict[str, Any] = {
        "type": "about:blank",
        "title": HTTPStatus(status).phrase,
        "status": status,
        "detail": _text(detail),
    }
    if errors is not None:
        body["errors"] = errors
    return Response(
        json.dumps(body, ensure_ascii=True, allow_nan=False, default=str),
        status_code=status,
        media_type=MEDIA_TYPE,
        headers=dict(headers or {}),
    )


def _status(exc: HarnessError) -> int:
    if isinstance(exc, RunNotFound):
        return 404
    if isinstance(exc, OverQuota):
        return 429
    if isinstance(exc, Forbidden | PolicyRefused):
        return 403
    if isinstance(exc, Conflict):
        return 409
    if isinstance(exc, ConfigError | TaskError):
        return 400
    return 500


def _wants_html(request: Request) -> bool:
    return not request.url.path.startswith("/api/")


def _invalid_fields(exc: RequestValidationError) -> list[dict[str, Any]]:
    out = []
    for error in exc.errors()[:20]:
        loc = [str(part) for part in error.get("loc", ())]
        out.append(
            {"loc": [_text(p)[:80] for p in loc], "msg": _text(error.get("msg", ""))[:300],
             "type": str(error.get("type", ""))}
        )  # fmt: skip
    return out


def install(app: FastAPI, allowed_methods: Any, error_page: Any) -> None:
    """Register the handlers on ``app``.  ``allowed_methods(path)`` lists a path's methods
    (for 405); ``error_page(request, status, message)`` renders the HTML error page."""

    def answer(request: Request, status: int, message: str, **kw: Any) -> Response:
        if _wants_html(request):
            page: Response = error_page(request, status, _text(message))
            for name, value in (kw.get("headers") or {}).items():
                page.headers[name] = value
            return page
        return problem(status, message, **kw)

    @app.exception_handler(HarnessError)
    async def harness_error(request: Request, exc: HarnessError) -> Response:
        status = _status(exc)
        if status == 500:
            log.error(
                "%s on %s %s: %s",
                type(exc).__name__,
                request.method,
                request.url.path,
                _text(exc),
            )
        headers = {"Retry-After": str(exc.retry_after_s)} if isinstance(exc, OverQuota) else None
        return answer(request, status, api_wording(str(exc)), headers=headers)

    @app.exception_handler(StreamsFull)
    async def streams_full(request: Request, exc: StreamsFull) -> Response:
        return problem(429, str(exc), headers={"Retry-After": str(exc.retry_after_s)})

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 405 and not _wants_html(request):
            # Included routers answer 405 with the methods of the first route that matched
            # the path only; say every method the path has.
            return problem(
                405,
                "Method Not Allowed",
                headers={"Allow": ", ".join(allowed_methods(request.url.path))},
            )
        if _wants_html(request) and exc.status_code == 401 and request.method == "GET":
            return RedirectResponse(f"/login?next={request.url.path}", status_code=303)
        return answer(request, exc.status_code, str(exc.detail), headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        errors = _invalid_fields(exc)
        first = errors[0] if errors else {"loc": [], "msg": "invalid request"}
        where = ".".join(first["loc"]) or "request"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        return answer(request, 422, f"{where}: {first['msg']}{more}", errors=errors)

    @app.exception_handler(Exception)
    async def bug(request: Request, exc: Exception) -> Response:
        log.error(
            "internal error on %s %s: %s: %s",
            request.method,
            request.url.path,
            type(exc).__name__,
            _text(exc),
        )
        return problem(500, "internal error; the hub's log has the details")
