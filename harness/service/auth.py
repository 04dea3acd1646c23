"""Who may do what: a token (Bearer header, or the HttpOnly cookie the login page sets) for
every write; reads open or closed by ``ServiceSettings.public_read``.

CSRF: the session cookie is ``SameSite=Strict``, so another site's page cannot make the
browser send it; on top of that every cookie-authenticated write must echo the ``csrf``
cookie's random value in the ``X-CSRF-Token`` header or a ``csrf`` form field (double
submit), and a request with a foreign ``Origin`` is refused.  Bearer requests need neither
(a browser never adds that header on its own).  Tokens never appear in a URL, a page or a log.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from fastapi import HTTPException, Request

from harness.service._db import ServiceDB, TokenInfo

__all__ = [
    "CSRF_COOKIE",
    "SESSION_COOKIE",
    "Caller",
    "caller",
    "check_csrf",
    "csrf_value",
]

SESSION_COOKIE = "galapagos_session"
CSRF_COOKIE = "galapagos_csrf"


@dataclass(frozen=True)
class Caller:
    token: TokenInfo | None
    #: How the token came: ``bearer``, ``cookie`` or ``""`` (none).
    via: str = ""

    @property
    def authenticated(self) -> bool:
        return self.token is not None


def caller(request: Request, db: ServiceDB) -> Caller:
    header = request.headers.get("authorization", "")
    if header:
        scheme, _, value = header.partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            raise HTTPException(
                401, "use Authorization: Bearer <token>", headers={"WWW-Authenticate": "Bearer"}
            )
        info = db.check_token(value.strip())
        if info is None:
            raise HTTPException(
                401, "invalid or revoked token", headers={"WWW-Authenticate": "Bearer"}
            )
        return Caller(info, "bearer")
    cookie = request.cookies.get(SESSION_COOKIE, "")
    if cookie:
        info = db.check_token(cookie)
        if info is not None:
            return Caller(info, "cookie")
    return Caller(None)


def csrf_value(request: Request) -> str:
    """The request's CSRF cookie value, or a fresh one (the page sets it)."""
    value = request.cookies.get(CSRF_COOKIE, "")
    if len(value) == 43 and value.replace("-", "").replace("_", "").isalnum():
        return value
    return secrets.token_urlsafe(32)


def check_csrf(request: Request, submitted: str | None) -> None:
    """Refuse a cookie-authenticated write that does not prove it comes from our own pages."""
    origin = request.headers.get("origin")
    if origin and origin != f"{request.url.scheme}://{request.url.netloc}":
        raise HTTPException(403, "cross-origin write refused")
    expected = request.cookies.get(CSRF_COOKIE, "")
    given = submitted or request.headers.get("x-csrf-token", "")
    if not expected or not given or not secrets.compare_digest(expected, given):
        raise HTTPException(403, "missing or wrong CSRF token; reload the page and try again")
