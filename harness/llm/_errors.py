"""Map the transport's exceptions to the harness error tree and decide which are worth retrying."""

from __future__ import annotations

import socket
from dataclasses import dataclass

from harness.core.errors import LLMError, LLMTimeout, LLMUnavailable
from harness.core.redact import redact_url
from harness.llm._http import (
    ConnectionFailed,
    MalformedResponse,
    RequestTimedOut,
    StatusError,
)

__all__ = ["Failure", "classify"]

_RETRY_STATUS = frozenset({408, 409, 429})
_DETAIL_CHARS = 300


@dataclass(frozen=True)
class Failure:
    error: LLMError
    retryable: bool
    #: Seconds the server asked us to wait (``Retry-After``), if it said.
    retry_after: float | None = None


@dataclass(frozen=True)
class Endpoint:
    """What an error message may name: never the key itself."""

    base_url: str
    model: str
    key_env: str
    key: str | None
    timeout_s: float

    def redact(self, text: str) -> str:
        return text.replace(self.key, "***") if self.key and len(self.key) >= 8 else text


def _connect_reason(exc: BaseException) -> str:
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cur, socket.gaierror):
            return "host name not resolved"
        if isinstance(cur, OSError) and cur.strerror:
            return cur.strerror.lower()
        cur = cur.__cause__ or cur.__context__
    return "connection failed"


def _retry_after(exc: StatusError) -> float | None:
    value = exc.headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None  # an HTTP date; the exponential backoff is good enough then


def classify(exc: BaseException, ep: Endpoint) -> Failure:
    """Turn an exception from one request into a harness error plus a retry decision."""
    url = redact_url(ep.base_url)  # an error text may reach the store and the hub
    where = f"model {ep.model!r} at {url}"
    if isinstance(exc, TimeoutError | RequestTimedOut):
        return Failure(
            LLMTimeout(
                f"LLM call to {where} timed out after {ep.timeout_s:g}s; raise llm.timeout_s "
                "or check the server's load"
            ),
            retryable=True,
        )
    if isinstance(exc, ConnectionFailed):
        return Failure(
            LLMUnavailable(
                f"LLM endpoint {url} is unreachable ({_connect_reason(exc)}): check that "
                "the server is running and that llm.api_base, --api-base or OPENAI_BASE_URL "
                "point at it"
            ),
            retryable=True,
        )
    if isinstance(exc, StatusError):
        status = exc.status
        detail = ep.redact(str(exc.message))[:_DETAIL_CHARS]
        if status in (401, 403):
            unset = "" if ep.key else " (the variable is not set)"
            msg = (
                f"authentication failed at {url} (HTTP {status}): check the API key in "
                f"${ep.key_env}{unset}"
            )
            return Failure(LLMError(msg), retryable=False)
        if status == 404:
            msg = (
                f"{where}: not found (HTTP 404); check the model name in llm.models and that the "
                f"API base ends with its version path (e.g. /v1). Server said: {detail}"
            )
            return Failure(LLMError(msg), retryable=False)
        retryable = status in _RETRY_STATUS or status >= 500
        msg = f"LLM call to {where} failed with HTTP {status}: {detail}"
        return Failure(LLMError(msg), retryable=retryable, retry_after=_retry_after(exc))
    if isinstance(exc, MalformedResponse):  # an answer, not a failure to get one: not retried
        return Failure(LLMError(f"{where} {exc}"), retryable=False)
    detail = ep.redact(str(exc))[:_DETAIL_CHARS]
    return Failure(LLMError(f"LLM call to {where} failed: {detail}"), retryable=False)
