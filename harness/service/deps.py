"""Request-scoped helpers shared by the routers: the hub, and who may read or write."""

from __future__ import annotations

from fastapi import HTTPException, Request

from harness.service.auth import Caller, caller, check_csrf
from harness.service.hub import Hub

__all__ = ["AUTH_RESPONSES", "READ_RESPONSES", "hub_of", "require_read", "require_write"]

#: Declared on every route so the OpenAPI document says what a client can get back (every
#: 4xx body is a problem document, RFC 9457; see ``harness.service.problems``).
READ_RESPONSES: dict[int | str, dict[str, str]] = {
    400: {"description": "Bad input, or a Host header that is not one of the hub's names."},
    401: {"description": "No valid token, and this hub's reads are private."},
    403: {"description": "The token's scope does not allow this."},
    404: {"description": "No such object."},
    422: {"description": "A parameter or the body does not match the schema."},
}
AUTH_RESPONSES: dict[int | str, dict[str, str]] = {
    **READ_RESPONSES,
    401: {"description": "A token is required (Bearer header or a login session)."},
    403: {
        "description": "Cookie write without the CSRF token, a token whose scope does not "
        "allow this, or a run the hub's policy refuses."
    },
    409: {"description": "The request does not fit the run's current state."},
    413: {"description": "Request body too large."},
    429: {"description": "The token's quota of queued runs is full (see Retry-After)."},
}


def hub_of(request: Request) -> Hub:
    hub: Hub = request.app.state.hub
    return hub


def require_read(request: Request) -> Caller:
    hub = hub_of(request)
    who = caller(request, hub.db, hub.settings)
    if not hub.settings.public_read and not who.allows("read"):
        raise HTTPException(
            401,
            "this hub's pages are private: log in at /login or send a Bearer token",
            headers={"WWW-Authenticate": "Bearer"},
        )
    return who


def require_write(request: Request) -> Caller:
    """A caller whose token may launch (and cancel or resume its own runs)."""
    hub = hub_of(request)
    who = caller(request, hub.db, hub.settings)
    if not who.authenticated:
        raise HTTPException(
            401,
            "writes need a token: create one with `galapagos token create NAME`, then "
            "send it as Authorization: Bearer <token> or log in at /login",
            headers={"WWW-Authenticate": "Bearer"},
        )
    if who.via == "cookie":
        check_csrf(request, None, hub.settings)
    if not who.allows("launch"):
        raise HTTPException(
            403,
            f"token {who.token.name if who.token else ''!r} may only read; launching, "
            "cancelling and resuming need scope launch (galapagos token create NAME --scope "
            "launch)",
        )
    return who
