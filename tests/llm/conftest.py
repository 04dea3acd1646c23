"""Fixtures for the LLM tests: a scripted OpenAI-compatible endpoint (stdlib HTTP server)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


def completion(text: str = "hello", *, usage: bool = True) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
    }
    if usage:
        body["usage"] = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    return body


@dataclass
class Step:
    """One scripted reply: HTTP status, body (JSON, or bytes sent as they are), headers, and a
    delay before answering."""

    status: int = 200
    body: Any = field(default_factory=completion)
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


@dataclass(frozen=True)
class Seen:
    """One request as it arrived: method, path (with its query) and headers."""

    method: str
    path: str
    headers: dict[str, str]


class ScriptedEndpoint:
    """A stdlib HTTP server replaying ``steps`` in order (the last one repeats), whatever the
    method or path: ``requests`` holds the JSON bodies (``{}`` for a GET), ``seen`` the rest."""

    def __init__(self, steps: list[Step]) -> None:
        self.steps = steps
        self.requests: list[dict[str, Any]] = []
        self.seen: list[Seen] = []
        self.release = threading.Event()  # wakes delayed handlers at close
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (stdlib naming)
                length = int(self.headers.get("content-length", 0))
                endpoint.seen.append(Seen(self.command, self.path, dict(self.headers.items())))
                endpoint.requests.append(json.loads(self.rfile.read(length) or b"{}"))
                index = min(len(endpoint.requests), len(endpoint.steps)) - 1
                step = endpoint.steps[index]
                if step.delay_s:
                    endpoint.release.wait(step.delay_s)
                raw = step.body if isinstance(step.body, bytes) else json.dumps(step.body)
                payload = raw.encode() if isinstance(raw, str) else raw
                try:
                    self.send_response(step.status)
                    if "content-type" not in {k.lower() for k in step.headers}:
                        self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    for key, value in step.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

            do_GET = do_POST

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def _step(spec: int | dict[str, Any]) -> Step:
    if isinstance(spec, int):
        body = completion() if spec == 200 else {"error": {"message": f"scripted {spec}"}}
        return Step(spec, body)
    spec = dict(spec)
    if "text" in spec or "usage" in spec:
        spec["body"] = completion(spec.pop("text", "hello"), usage=spec.pop("usage", True))
    return Step(**spec)


@pytest.fixture
def scripted() -> Iterator[Any]:
    """``scripted(500, {"status": 429, "headers": {…}}, 200)``: one reply per request, in order.

    A step is a status (200 = a small completion) or a dict of :class:`Step` fields, where
    ``text``/``usage`` build the completion body.
    """
    made: list[ScriptedEndpoint] = []

    def make(*specs: int | dict[str, Any]) -> ScriptedEndpoint:
        endpoint = ScriptedEndpoint([_step(s) for s in specs] or [Step()])
        made.append(endpoint)
        return endpoint

    yield make
    for endpoint in made:
        endpoint.close()
