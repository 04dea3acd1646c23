"""ASGI middleware: the Host allow-list (400), the request body limit (413), security headers
on every response, and the operator's endpoint credentials masked in every response body."""

from __future__ import annotations

import html
import json
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, urlsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from harness.core.redact import has_credentials
from harness.service.settings import host_name

__all__ = ["BodyLimit", "HostCheck", "SecretMask", "SecurityHeaders", "secrets_of"]

#: Scripts only from the hub itself (no inline script, no CDN); plotly draws with inline
#: styles, hence style-src 'unsafe-inline'.  Nothing may frame the hub.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'; form-action 'self'"
)
_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    # same-origin, not no-referrer: with no-referrer a browser sends "Origin: null" on form
    # posts, and the CSRF check compares Origin with the hub.
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
]


class BodyLimit:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None:
            try:
                too_big = int(declared) > self.max_bytes
            except ValueError:
                too_big = False
            if too_big:
                await _reject(send, self.max_bytes)
                return
        if scope.get("method") not in ("POST", "PUT", "PATCH", "DELETE"):
            await self.app(scope, receive, send)
            return
        # Read the body here (it is small by definition) so that an oversize one is answered
        # 413 before any endpoint sees it; the framework would turn an error raised inside
        # its body reading into a 400.
        chunks: list[bytes] = []
        seen = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body = message.get("body", b"")
            seen += len(body)
            if seen > self.max_bytes:
                await _reject(send, self.max_bytes)
                return
            chunks.append(body)
            if not message.get("more_body"):
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


async def _reject(send: Send, max_bytes: int) -> None:
    await _problem(send, 413, "Content Too Large", f"request body larger than {max_bytes} bytes")


async def _problem(send: Send, status: int, title: str, detail: str) -> None:
    body = json.dumps(
        {"type": "about:blank", "title": title, "status": status, "detail": detail},
        ensure_ascii=True,
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/problem+json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
                *_HEADERS,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class SecurityHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers: list[Any] = list(message.get("headers") or [])
                present = {name.lower() for name, _ in headers}
                headers += [h for h in _HEADERS if h[0] not in present]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)


class HostCheck:
    """Refuse a request whose Host header is not one of the hub's names: a DNS-rebinding page
    (evil.example resolving to 127.0.0.1) reaches the hub with its own name as Host."""

    def __init__(self, app: ASGIApp, allowed: Iterable[str]) -> None:
        self.app = app
        self.allowed = frozenset(allowed)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        raw = dict(scope.get("headers") or []).get(b"host", b"")
        host = host_name(raw.decode("latin-1"))
        if host not in self.allowed:
            shown = raw[:60].decode("latin-1").encode("ascii", "backslashreplace").decode()
            await _problem(
                send,
                400,
                "Bad Request",
                f"Host {shown!r} is not one of this hub's names; open it by one of them "
                "(galapagos serve --public-name NAME adds one)",
            )
            return
        await self.app(scope, receive, send)


def secrets_of(url: str | None) -> list[bytes]:
    """The credentials in an endpoint URL (password, user-info, secret query values), as
    they may appear in a response: raw, percent-encoded, HTML- and JSON-escaped."""
    if not url or not has_credentials(url):
        return []
    try:
        parts = urlsplit(url)
        found = [parts.password or "", f"{parts.username or ''}:{parts.password or ''}"]
        found += [v for k, v in parse_qsl(parts.query) if len(v) >= 6]
    except ValueError:
        return []
    needles: set[bytes] = set()
    for secret in found:
        if len(secret) < 6:
            continue
        for form in (
            secret,
            quote(secret, safe=""),
            quote_plus(secret),
            html.escape(secret),
            json.dumps(secret)[1:-1],
        ):
            needles.add(form.encode())
    return sorted(needles, key=len, reverse=True)


class SecretMask:
    """Last line of defence: the operator's endpoint credentials replaced by as many ``*``
    in every response body, whatever produced it (the views redact URLs already; this also
    catches a credential quoted outside a URL).  Same length, so Content-Length holds."""

    def __init__(self, app: ASGIApp, needles: list[bytes]) -> None:
        self.app = app
        self.needles = needles

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def masked(message: Message) -> None:
            if message["type"] == "http.response.body":
                body = message.get("body", b"")
                for needle in self.needles:
                    if needle in body:
                        body = body.replace(needle, b"*" * len(needle))
                message = {**message, "body": body}
            await send(message)

        await self.app(scope, receive, masked)
