"""The two calls Galapagos makes to an OpenAI-compatible endpoint, over ``httpx`` (no SDK).

``POST {api_base}/chat/completions`` (never streamed) and ``GET {api_base}/models`` are all a
run needs, so the ``openai`` SDK (≈0.4 s of imports, pydantic models for every API type) is not
on the run path.  What goes on the wire is what the SDK sent for these two calls: the same JSON
body (``extra_body`` merged in last), ``Authorization: Bearer <key>``, the organisation and
project headers from ``OPENAI_ORG_ID``/``OPENAI_PROJECT_ID`` when set, one timeout for every
phase of a request, redirects followed, no retries (:class:`~harness.llm.client.LLMClient`
retries).  Failures are the small tree below, mapped to the harness's errors by
:mod:`harness.llm._errors`::

    TransportError
    ├── RequestTimedOut       the request's timeout passed
    ├── ConnectionFailed      no answer (refused, DNS, TLS, reset); the cause is chained
    ├── StatusError           an HTTP status outside 2xx (status, message, headers)
    └── MalformedResponse     a 2xx whose body is not a chat completion
"""

from __future__ import annotations

import json
import os
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from harness import __version__

__all__ = [
    "Completion",
    "ConnectionFailed",
    "MalformedResponse",
    "RequestTimedOut",
    "StatusError",
    "Transport",
    "TransportError",
    "parse_completion",
]

#: The SDK's pool limits (httpx's own default is 100 connections).
_LIMITS = httpx.Limits(max_connections=1000, max_keepalive_connections=100)
#: Request headers from the environment, as the SDK reads them.
_ENV_HEADERS = (("OpenAI-Organization", "OPENAI_ORG_ID"), ("OpenAI-Project", "OPENAI_PROJECT_ID"))


class TransportError(Exception):
    """A request to the endpoint failed."""


class RequestTimedOut(TransportError):
    pass


class ConnectionFailed(TransportError):
    pass


class StatusError(TransportError):
    """The endpoint answered with a status outside 2xx."""

    def __init__(self, status: int, message: str, headers: Mapping[str, str]) -> None:
        super().__init__(message)
        self.status = status
        #: ``Error code: 429`` plus `` - <error.message>`` when the body carries one (as the SDK).
        self.message = message
        #: The response headers (case-insensitive), e.g. ``Retry-After``.
        self.headers = headers


class MalformedResponse(TransportError):
    """A 2xx answer that is not what the API returns; the text completes "model … at URL …"."""


@dataclass(frozen=True)
class Completion:
    """What the client reads from a chat completion: the first choice's text and the usage."""

    text: str
    #: None when the endpoint reports no usage (the client estimates then).
    prompt_tokens: int | None
    completion_tokens: int | None


def _count(usage: Any, key: str) -> int | None:
    value = usage.get(key) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def parse_completion(data: Any) -> Completion:
    """The decoded JSON of a chat completion → :class:`Completion`, or ``MalformedResponse``."""
    if not isinstance(data, dict):
        raise MalformedResponse("returned a response that is not a JSON object")
    choices = data.get("choices")
    if not choices:
        raise MalformedResponse("returned no choices")
    first = choices[0] if isinstance(choices, list) else None
    message = first.get("message") if isinstance(first, dict) else None
    if not isinstance(message, dict):
        raise MalformedResponse("returned a choice without a message")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise MalformedResponse("returned a message whose content is not text")
    usage = data.get("usage")
    return Completion(
        content or "", _count(usage, "prompt_tokens"), _count(usage, "completion_tokens")
    )


def _status_message(response: httpx.Response) -> str:
    """``Error code: N``, plus the body's ``error.message`` (or top-level ``message``)."""
    text = response.text.strip()
    try:
        body = json.loads(text)
    except ValueError:
        return f"Error code: {response.status_code}"
    error = body.get("error", body) if isinstance(body, dict) else None
    detail = error.get("message") if isinstance(error, dict) else None
    suffix = f" - {detail}" if isinstance(detail, str) and detail else ""
    return f"Error code: {response.status_code}{suffix}"


class Transport:
    """One connection pool to one endpoint, shared by every client of that endpoint and key.

    ``trust_env=False`` ignores proxy variables and ``.netrc`` (the offline server on loopback).
    """

    def __init__(
        self, base_url: str, api_key: str, timeout_s: float, *, trust_env: bool = True
    ) -> None:
        url = httpx.URL(base_url)
        path, sep, query = url.raw_path.partition(b"?")
        prefix = path if path.endswith(b"/") else path + b"/"
        self._chat_url = url.copy_with(raw_path=prefix + b"chat/completions" + sep + query)
        self._models_url = url.copy_with(raw_path=prefix + b"models" + sep + query)
        self.timeout_s = timeout_s
        headers = {
            "Accept": "application/json",
            "User-Agent": f"galapagos/{__version__}",
            "Authorization": f"Bearer {api_key}",
        }
        for header, variable in _ENV_HEADERS:
            if value := os.environ.get(variable):
                headers[header] = value
        self._http = httpx.AsyncClient(
            headers=headers,
            timeout=timeout_s,
            limits=_LIMITS,
            follow_redirects=True,
            trust_env=trust_env,
        )

    async def chat(
        self,
        body: Mapping[str, Any],
        *,
        headers: Mapping[str, str] | None = None,
        timeout_s: float | None = None,
    ) -> Completion:
        """``POST /chat/completions`` with ``body`` as JSON; the first choice parsed."""
        content = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        request = self._http.build_request(
            "POST",
            self._chat_url,
            content=content.encode(),
            headers={"Content-Type": "application/json", **(headers or {})},
            timeout=self._timeout(timeout_s),
        )
        try:
            data = json.loads(await self._send(request))
        except ValueError as exc:  # not JSON, or not UTF-8
            raise MalformedResponse("returned a response that is not JSON") from exc
        return parse_completion(data)

    async def model_ids(self, *, timeout_s: float | None = None) -> tuple[str, ...] | None:
        """``GET /models``: the ids listed, or None when the answer is not a JSON object."""
        request = self._http.build_request(
            "GET", self._models_url, timeout=self._timeout(timeout_s)
        )
        try:
            page = json.loads(await self._send(request))
        except ValueError:
            return None
        if not isinstance(page, dict):
            return None
        data = page.get("data")
        entries = data if isinstance(data, list) else []
        return tuple(
            e["id"] for e in entries if isinstance(e, dict) and isinstance(e.get("id"), str)
        )

    def _timeout(self, timeout_s: float | None) -> httpx.Timeout:
        return httpx.Timeout(self.timeout_s if timeout_s is None else timeout_s)

    async def _send(self, request: httpx.Request) -> bytes:
        try:
            response = await self._http.send(request)
        except httpx.TimeoutException as exc:
            raise RequestTimedOut("request timed out") from exc
        except (httpx.RequestError, ssl.SSLError) as exc:
            raise ConnectionFailed("connection error") from exc
        if not response.is_success:
            raise StatusError(response.status_code, _status_message(response), response.headers)
        return response.content

    async def aclose(self) -> None:
        await self._http.aclose()
