"""Who may do what: a token (Bearer header, or a browser's login session) for every write;
reads open or closed by ``ServiceSettings.public_read``; each token's scope (read, launch,
admin) bounds what it may do.

A browser logs in by pasting a token once: the hub makes a server-side session and the
cookie holds only the session's random id (the store keeps its hash), never the token, so
logging out or revoking the token ends the session wherever its cookie went.  A session ends
after ``session_ttl_s`` or ``session_idle_s`` unused.

CSRF: the session cookie is ``SameSite=Strict``, so another site's page cannot make the
browser send it; on top of that every cookie-authenticated write must echo the ``csrf``
cookie's random value in the ``X-CSRF-Token`` header or a ``csrf`` form field (double
submit), and a request whose ``Origin`` is not one of the hub's own names (the Host
allow-list, never the request's own Host header) is refused.  Bearer requests need neither (a
browser never adds that header on its own).  Tokens never appear in a URL, a page or a log.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from urllib.parse import urlsplit

from fastapi import HTTPException, Request

from harness.service._db import ServiceDB, TokenInfo
from harness.service.settings import ServiceSettings, host_name

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
    #: Who holds streams and quotas: ``token:<id>``, else ``addr:<client address>``.
    client: str = ""

    @property
    def authenticated(self) -> bool:
        return self.token is not None

    def allows(self, scope: str) -> bool:
        return self.token is not None and self.token.allows(scope)


def _address(request: Request) -> str:
    return f"addr:{request.client.host if request.client else '?'}"


def caller(request: Request, db: ServiceDB, settings: ServiceSettings) -> Caller:
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
                401,
                "invalid, expired or revoked token",
                headers={"WWW-Authenticate": "Bearer"},
            )
        return Caller(info, "bearer", f"token:{info.id}")
    cookie = request.cookies.get(SESSION_COOKIE, "")
    if cookie:
        session = db.check_session(cookie, idle_s=settings.session_idle_s)
        if session is not None:
            return Caller(session.token, "cookie", f"token:{session.token.id}")
    return Caller(None, "", _address(request))


def csrf_value(request: Request) -> str:
    """The request's CSRF cookie value, or a fresh one (the page sets it)."""
    value = request.cookies.get(CSRF_COOKIE, "")
    if len(value) == 43 and value.isascii() and value.replace("-", "").replace("_", "").isalnum():
        return value
    return secrets.token_urlsafe(32)


def origin_allowed(origin: str, settings: ServiceSettings) -> bool:
    """Whether a browser's ``Origin`` is one of the hub's own names (never judged by the
    request's Host header, which a DNS-rebinding page controls)."""
    try:
        parts = urlsplit(origin)
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return False
    return host_name(parts.netloc) in settings.allowed_hosts


def check_csrf(request: Request, submitted: str | None, settings: ServiceSettings) -> None:
    """Refuse a cookie-authenticated write that does not prove it comes from our own pages."""
    origin = request.headers.get("origin")
    if origin and not origin_allowed(origin, settings):
        raise HTTPException(403, "cross-origin write refused")
    expected = request.cookies.get(CSRF_COOKIE, "")
    given = submitted or request.headers.get("x-csrf-token", "")
    if not expected or not given or not secrets.compare_digest(_bytes(expected), _bytes(given)):
        raise HTTPException(403, "missing or wrong CSRF token; reload the page and try again")


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "replace")  # compare_digest refuses non-ASCII str
