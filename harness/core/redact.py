"""Endpoint URLs with their credentials removed, for every place a URL is shown or stored.

Some gateways want credentials in the URL itself (``https://user:pass@host/v1?api-key=…``).
Secrets come only from the environment, so a URL is redacted before it reaches a page, an API
record, a log line, the store or an export: the user-info part and the values of query
parameters whose names look like secrets are replaced by ``***``.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["MASK", "has_credentials", "redact_url", "redact_text"]

MASK = "***"

#: Query parameter names whose values are secrets (matched case-insensitively, as substrings
#: after removing ``-`` and ``_``): ``api-key``, ``access_token``, ``sig``, ``X-Amz-Signature``…
_SECRET_PARAMS = ("key", "token", "secret", "password", "passwd", "pwd", "sig", "auth", "code")

_URL_IN_TEXT = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>]+")


def _secret_param(name: str) -> bool:
    flat = name.lower().replace("-", "").replace("_", "")
    return any(word in flat for word in _SECRET_PARAMS)


def redact_url(url: str | None) -> str | None:
    """``url`` with user, password and secret-looking query values replaced by ``***``.

    ``None`` and the empty string pass through; text that does not parse as a URL is returned
    with anything before an ``@`` in its authority masked, never raised on.
    """
    if not url:
        return url
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return _URL_IN_TEXT.sub(lambda m: _mask_authority(m.group(0)), url)
    netloc = parts.netloc
    if "@" in netloc:
        hostport = f"[{host}]" if ":" in host else host
        netloc = f"{MASK}@{hostport}" + (f":{port}" if port is not None else "")
    query = parts.query
    pairs = parse_qsl(query, keep_blank_values=True)
    if any(_secret_param(k) and v for k, v in pairs):
        query = urlencode([(k, MASK if _secret_param(k) and v else v) for k, v in pairs], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _mask_authority(url: str) -> str:
    scheme, _, rest = url.partition("://")
    authority, slash, tail = rest.partition("/")
    if "@" in authority:
        authority = f"{MASK}@{authority.rsplit('@', 1)[1]}"
    return f"{scheme}://{authority}{slash}{tail}"


def has_credentials(url: str | None) -> bool:
    """True when ``url`` carries something :func:`redact_url` would mask."""
    return bool(url) and redact_url(url) != url


def redact_text(text: str) -> str:
    """Every URL inside free text (an error message, a log line) redacted."""
    return _URL_IN_TEXT.sub(lambda m: redact_url(m.group(0)) or "", text)
