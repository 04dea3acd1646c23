"""The offline model as an OpenAI-compatible HTTP server (FastAPI), run by uvicorn in a thread.

Serves ``POST /v1/chat/completions`` (non-streaming, ``n`` ≥ 1, usage counted as characters/4)
and ``GET /v1/models``.  Answers are deterministic given (server seed, request ``seed``, model,
messages): the same request always gets the same answer, whoever sends it and whenever.  The
``X-Galapagos-Purpose`` header (request metadata, see :data:`harness.llm.config.PURPOSE_HEADER`)
picks the responder; it does not enter the seed of the answer.

This module is the offline model's composition root: :func:`default_responders` lists the
responders in the order they are asked.

A thread rather than a subprocess: it dies with the run (even on SIGKILL), needs no port
hand-shake, and its work (tokenising one program) is small next to an evaluation.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import socket
import threading
import time
from collections.abc import Sequence
from typing import Annotated, Any

import uvicorn
from fastapi import Body, FastAPI, Header
from fastapi.responses import JSONResponse

from harness.core.errors import LLMUnavailable
from harness.core.rng import make_rng
from harness.llm.config import OFFLINE_MODEL, PURPOSE_HEADER, FaultRates
from harness.llm.offline.faults import draw_fault
from harness.llm.offline.guide_responder import guide_responder
from harness.llm.offline.paradigm_responder import paradigm_responder
from harness.llm.offline.responders import (
    OfflineRequest,
    Responder,
    ResponseContext,
    diff_responder,
    rewrite_responder,
)
from harness.llm.offline.strategy_responder import strategy_responder
from harness.llm.usage import estimate_tokens

__all__ = [
    "OfflineServer",
    "answer",
    "create_app",
    "default_responders",
    "start_offline_server",
]


def default_responders() -> tuple[Responder, ...]:
    """By purpose first (paradigm, guide, strategy); then mutation requests, diff or rewrite."""
    return (
        paradigm_responder(),
        guide_responder(),
        strategy_responder(),
        diff_responder(),
        rewrite_responder(),
    )


def answer(
    request: OfflineRequest, *, seed: int, faults: FaultRates, responders: Sequence[Responder]
) -> str:
    """The offline model's reply to one request (pure: no I/O, no clock)."""
    digest = hashlib.sha256(
        json.dumps([request.model, request.messages], ensure_ascii=False).encode()
    ).hexdigest()
    key = f"{request.seed}:{digest}"
    ctx = ResponseContext(
        rng=make_rng(seed, f"mutate:{key}"),
        fault=draw_fault(faults, make_rng(seed, f"fault:{key}")),
    )
    for responder in responders:
        if responder.detect(request):
            return responder.respond(request, ctx)
    return "[galapagos offline mutation model] No responder handles this prompt."


def _content(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # content parts: [{"type": "text", "text": …}, …]
        return "".join(p.get("text", "") for p in value if isinstance(p, dict))
    if value is None:
        return ""
    raise ValueError("message content must be a string or a list of text parts")


def _parse(body: dict[str, Any], purpose: str | None) -> tuple[OfflineRequest, int]:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ValueError("'messages' must be a non-empty list")
    if body.get("stream"):
        raise ValueError("streaming is not supported by the offline model")
    seed, n = body.get("seed"), body.get("n") or 1
    if seed is not None and not isinstance(seed, int):
        raise ValueError("'seed' must be an integer")
    if not isinstance(n, int) or not 1 <= n <= 16:
        raise ValueError("'n' must be an integer from 1 to 16")
    pairs = tuple(
        (str(m.get("role", "")), _content(m.get("content")))
        for m in messages
        if isinstance(m, dict)
    )
    return OfflineRequest(str(body.get("model") or OFFLINE_MODEL), pairs, seed, purpose), n


def _error(message: str, status: int = 400) -> JSONResponse:
    payload = {"error": {"message": message, "type": "invalid_request_error", "code": None}}
    return JSONResponse(status_code=status, content=payload)


def create_app(
    *,
    seed: int = 0,
    faults: FaultRates | None = None,
    responders: Sequence[Responder] | None = None,
) -> FastAPI:
    """The ASGI app; ``app.state.requests`` counts chat completions served."""
    rates = faults or FaultRates()
    chain = tuple(responders) if responders is not None else default_responders()
    app = FastAPI(title="Galapagos offline mutation model", docs_url=None, redoc_url=None)
    app.state.requests = 0

    @app.get("/v1/models")
    async def list_models() -> dict[str, Any]:
        model = {"id": OFFLINE_MODEL, "object": "model", "created": 0, "owned_by": "galapagos"}
        return {"object": "list", "data": [model]}

    @app.post("/v1/chat/completions", response_model=None)
    async def chat(
        body: Annotated[dict[str, Any], Body()],
        purpose: Annotated[str | None, Header(alias=PURPOSE_HEADER)] = None,
    ) -> dict[str, Any] | JSONResponse:
        app.state.requests += 1
        try:
            request, n = _parse(body, purpose)
        except ValueError as exc:
            return _error(str(exc))
        texts = [
            answer(
                request if i == 0 else dataclasses.replace(request, seed=(request.seed or 0) + i),
                seed=seed,
                faults=rates,
                responders=chain,
            )
            for i in range(n)
        ]
        prompt_tokens = estimate_tokens(request.text)
        completion_tokens = sum(estimate_tokens(t) for t in texts)
        choices = [
            {
                "index": i,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
                "logprobs": None,
            }
            for i, text in enumerate(texts)
        ]
        return {
            "id": "chatcmpl-offline-" + hashlib.sha256("".join(texts).encode()).hexdigest()[:24],
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.model,
            "system_fingerprint": "galapagos-offline",
            "choices": choices,
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    return app


class OfflineServer:
    """An ASGI app served on a background thread; ``close()`` stops it and frees the port."""

    def __init__(self, app: Any, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.app = app
        # proto=IPPROTO_TCP matters: asyncio only sets TCP_NODELAY on accepted sockets whose
        # proto says TCP, and without it every keep-alive request waits ~40 ms for a delayed ACK.
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind((host, port))
        self.host, self.port = self._sock.getsockname()[:2]
        config = uvicorn.Config(
            app,
            log_config=None,  # never reconfigure the host process's logging
            access_log=False,
            lifespan="off",
            loop="asyncio",
            timeout_graceful_shutdown=2,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run,
            kwargs={"sockets": [self._sock]},
            name=f"galapagos-offline-llm:{self.port}",
            daemon=True,
        )

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def requests(self) -> int:
        return int(getattr(self.app.state, "requests", 0))

    def start(self, timeout_s: float = 10.0) -> OfflineServer:
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.close()
                raise LLMUnavailable(
                    f"the offline model server did not start on {self.host}:{self.port}; "
                    "run with --debug for uvicorn's log"
                )
            time.sleep(0.01)
        return self

    def close(self) -> None:
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout=10)
        self._sock.close()

    def __enter__(self) -> OfflineServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def start_offline_server(
    *,
    seed: int = 0,
    faults: FaultRates | None = None,
    responders: Sequence[Responder] | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
) -> OfflineServer:
    """Start the offline model on loopback (port 0 = any free port) and wait until it serves."""
    app = create_app(seed=seed, faults=faults, responders=responders)
    return OfflineServer(app, host=host, port=port).start()
