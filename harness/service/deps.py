"""Request-scoped helpers shared by the routers: the hub, and who may read or write."""

from __future__ import annotations

from fastapi import HTTPException, Request

from harness.service.auth import Caller, caller, check_csrf
from harness.service.hub import Hub

__all__ = ["AUTH_RESPONSES", "READ_RESPONSES", "hub_of", "require_read", "require_write"]

#: Declared on every route so the OpenAPI document says what a client can get back.
READ_RESPONSES: dict[int | str, dict[str, str]] = {
    400: {"description": "Bad input (the message says what is wrong)."},
    401: {"description": "No valid token, and this hub's reads are private."},
    404: {"description": "No such object."},
}
AUTH_RESPONSES: dict[int | str, dict[str, str]] = {
    400: {"description": "Bad input (the message names the object and the remedy)."},
    401: {"description": "A token is required (Bearer header or the login cookie)."},
    403: {"description": "Cookie-authenticated write without the CSRF token."},
    404: {"description": "No such object."},
    409: {"description": "The request does not fit the run's current state."},
    413: {"description": "Request body too large."},
}


def hub_of(request: Request) -> Hub:
    hub: Hub = request.app.state.hub
    return hub


def require_read(request: Request) -> Caller:
    hub = hub_of(request)
    who = caller(request, hub.db)
    if not who.authenticated and not hub.settings.public_read:
        raise HTTPException(
            401,
            "this hub's pages are private: log in at /login or send a Bearer token",
            headers={"WWW-Authenticate": "Bearer"},
        )
    return who


def require_write(request: Request) -> Caller:
    hub = hub_of(request)
    who = caller(request, hub.db)
    if not who.authenticated:
        raise HTTPException(
            401,
            "writes need a token: create one with `galapagos token create NAME`, then "
            "send it as Authorization: Bearer <token> or log in at /login",
            headers={"WWW-Authenticate": "Bearer"},
        )
    if who.via == "cookie":
        check_csrf(request, None)
    return who
