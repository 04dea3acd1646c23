"""The LLM client: a seeded, weighted ensemble over one OpenAI-compatible endpoint.

One :meth:`LLMClient.generate` is one logical call: the ensemble picks a model with the RNG it
was given, the budget is checked, and the request is sent with a per-call ``seed``, a deadline
and retries with exponential backoff on transient failures (connection, timeout, 408/409/429,
5xx; never on 4xx such as a bad key or an unknown model).  The requests go through
:mod:`harness.llm._http` (``httpx``, no retries of its own, so this loop is the only one).  The
result is an :class:`~harness.core.records.LLMCall` with tokens (the endpoint's, or
characters/4 when it reports none), latency and cost.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.core.errors import LLMError, LLMUnavailable
from harness.core.records import LLMCall, Prompt
from harness.core.redact import redact_url
from harness.core.rng import rng_from_state, rng_state
from harness.llm._errors import Endpoint, classify
from harness.llm._http import (
    Completion,
    MalformedResponse,
    StatusError,
    Transport,
    TransportError,
)
from harness.llm.config import GUIDE_PURPOSES, PURPOSE_HEADER, ModelConfig, ResolvedLLM
from harness.llm.usage import UsageMeter, estimate_tokens

if TYPE_CHECKING:
    from harness.llm.offline import OfflineServer

__all__ = ["EndpointInfo", "LLMClient", "SeededLLM", "choose_model", "make_transport", "open_llm"]

MAX_BACKOFF_S = 60.0


def choose_model(models: Sequence[ModelConfig], rng: random.Random) -> ModelConfig:
    """Weighted choice; always exactly one draw, so the RNG stream does not depend on weights."""
    u = rng.random() * sum(m.weight for m in models)
    for model in models:
        u -= model.weight
        if u < 0:
            return model
    return next(m for m in reversed(models) if m.weight > 0)


@dataclass(frozen=True)
class EndpointInfo:
    base_url: str
    #: Model ids the endpoint lists (empty when it does not list models).
    models: tuple[str, ...]
    #: Configured model names the endpoint does not list (a warning, not an error: some
    #: providers route names they do not list).
    missing: tuple[str, ...] = ()


@dataclass(frozen=True)
class SeededLLM:
    """The :class:`~harness.core.proposer.LLM` handle with a fixed per-call seed."""

    client: LLMClient
    seed: int

    async def generate(self, prompt: Prompt, *, purpose: str = "propose") -> LLMCall:
        return await self.client.generate(prompt, purpose=purpose, seed=self.seed)


class LLMClient:
    """Implements the controller's ``LLM`` protocol (plus an optional ``seed``)."""

    def __init__(
        self,
        settings: ResolvedLLM,
        *,
        rng: random.Random,
        meter: UsageMeter | None = None,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        server: OfflineServer | None = None,
        transport: Transport | None = None,
    ) -> None:
        if settings.api_base is None:
            raise LLMError("no API base to talk to; build the client with open_llm()")
        self.settings = settings
        self.meter = meter or UsageMeter(settings.max_total_tokens, settings.max_cost)
        self._rng = rng
        self._sleep = sleep
        self._server = server
        self._offline = server is not None or settings.provider == "offline"
        #: ``transport``: a connection pool shared with other runs (one per endpoint and key,
        #: see :mod:`harness.runtime`); its owner closes it, not this client.
        self._owns_transport = transport is None
        self._http = transport or make_transport(settings)

    @property
    def base_url(self) -> str:
        return str(self.settings.api_base)

    @property
    def shown_url(self) -> str:
        """The base URL as errors show it: credentials in it masked (it may reach the store)."""
        return str(redact_url(self.base_url))

    def bind(self, *, seed: int) -> SeededLLM:
        return SeededLLM(self, seed)

    def _endpoint(self, model: str) -> Endpoint:
        s = self.settings
        return Endpoint(self.base_url, model, s.api_key_env, s.api_key, s.timeout_s)

    def _request(self, model: ModelConfig, prompt: Prompt, seed: int) -> dict[str, Any]:
        body: dict[str, Any] = {"model": model.name, "messages": prompt.messages()}
        if self.settings.send_seed or self._offline:  # offline answers need it
            body["seed"] = seed
        for name in ("temperature", "top_p", "max_tokens"):
            if (value := getattr(model, name)) is not None:
                body[name] = value
        # Provider-specific fields go in as they are, over the fields above (as the SDK did).
        return {**body, **model.extra_body}

    def backoff(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds before retry ``attempt`` (0-based); honours a server's Retry-After."""
        delay = min(self.settings.retry_backoff_s * 2**attempt, MAX_BACKOFF_S)
        return max(delay, min(retry_after, MAX_BACKOFF_S)) if retry_after is not None else delay

    async def generate(
        self, prompt: Prompt, *, purpose: str = "propose", seed: int | None = None
    ) -> LLMCall:
        """One call: raises ``BudgetExhausted`` before it, ``LLMError`` after retries."""
        self.meter.check()
        pool = self.settings.models
        if purpose in GUIDE_PURPOSES and self.settings.guide_models:
            pool = self.settings.guide_models
        model = choose_model(pool, self._rng)
        if seed is None:
            seed = self._rng.getrandbits(31)
        body = self._request(model, prompt, seed)
        # The purpose travels as request metadata (the offline model answers by it), never as
        # prompt text: what a scaffold writes is what a real model reads.
        headers = {PURPOSE_HEADER: purpose}
        for attempt in range(self.settings.retries + 1):
            started = time.monotonic()
            try:
                completion = await asyncio.wait_for(
                    self._http.chat(body, headers=headers), self.settings.timeout_s
                )
            except (TransportError, TimeoutError) as exc:
                failure = classify(exc, self._endpoint(model.name))
                if not failure.retryable or attempt == self.settings.retries:
                    raise failure.error from exc
                await self._sleep(self.backoff(attempt, failure.retry_after))
                continue
            call = self._to_call(completion, model, prompt, time.monotonic() - started, purpose)
            self.meter.record(call)
            return call
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _to_call(
        self,
        completion: Completion,
        model: ModelConfig,
        prompt: Prompt,
        latency: float,
        purpose: str,
    ) -> LLMCall:
        prompt_tokens = completion.prompt_tokens
        if prompt_tokens is None:
            prompt_tokens = estimate_tokens(prompt.system + prompt.user)
        completion_tokens = completion.completion_tokens
        if completion_tokens is None:
            completion_tokens = estimate_tokens(completion.text)
        return LLMCall(
            model=model.name,
            text=completion.text,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            latency_s=latency,
            cost=model.cost(prompt_tokens, completion_tokens),
            purpose=purpose,
        )

    async def check_endpoint(self, *, timeout_s: float = 10.0) -> EndpointInfo:
        """Probe the endpoint once, without retries, so a dead or wrong one fails before the run.

        ``GET /models`` first; an endpoint that does not list models must then answer one
        minimal chat completion (``max_tokens=1``, a few tokens, not metered): anything that
        is not the chat-completions protocol — a static file server, a web page — is refused
        here instead of costing every iteration its retries.
        """
        names = tuple(m.name for m in self.settings.models)
        try:
            ids = await asyncio.wait_for(self._http.model_ids(timeout_s=timeout_s), timeout_s)
        except StatusError as exc:
            if exc.status != 404:
                raise classify(exc, self._endpoint(names[0])).error from exc
            ids = None
        except (TransportError, TimeoutError) as exc:
            raise classify(exc, self._endpoint(names[0])).error from exc
        if ids is None:  # 404, or an answer that is not a JSON object
            await self._probe_chat(names[0], timeout_s)
            return EndpointInfo(self.base_url, ())  # it speaks chat, it just lists no models
        missing = tuple(n for n in names if ids and n not in ids)
        return EndpointInfo(self.base_url, ids, missing)

    async def _probe_chat(self, model: str, timeout_s: float) -> None:
        request: dict[str, Any] = {
            "model": model,
            "messages": [{"role": "user", "content": "ping"}],
            "max_tokens": 1,
        }
        try:
            await asyncio.wait_for(self._http.chat(request, timeout_s=timeout_s), timeout_s)
        except StatusError as exc:
            if exc.status in (404, 405, 501):
                raise LLMUnavailable(
                    f"{self.shown_url} does not speak the OpenAI chat-completions protocol "
                    f"(GET /models: 404, POST /chat/completions: HTTP {exc.status}); point "
                    "--api-base (or llm.api_base) at an OpenAI-compatible base URL, usually "
                    "ending in /v1"
                ) from exc
            raise classify(exc, self._endpoint(model)).error from exc
        except MalformedResponse as exc:
            raise LLMUnavailable(
                f"{self.shown_url} answered POST /chat/completions without choices; it is not "
                "an OpenAI-compatible chat endpoint"
            ) from exc
        except (TransportError, TimeoutError) as exc:
            raise classify(exc, self._endpoint(model)).error from exc

    def state_dict(self) -> dict[str, Any]:
        """The ensemble RNG (model choice and drawn seeds); the meter checkpoints itself."""
        return {"rng": rng_state(self._rng)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        rng_from_state(self._rng, state["rng"])

    async def aclose(self) -> None:
        if self._owns_transport:
            await self._http.aclose()
        if self._server is not None:
            await asyncio.to_thread(self._server.close)

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def make_transport(settings: ResolvedLLM) -> Transport:
    """The HTTP transport for an endpoint (no retries of its own: :meth:`LLMClient.generate`)."""
    # The offline server is on loopback: never route it through an HTTP proxy from the env.
    return Transport(
        str(settings.api_base),
        settings.api_key or "not-set",
        settings.timeout_s,
        trust_env=settings.provider != "offline",
    )


async def open_llm(
    settings: ResolvedLLM, *, rng: random.Random, meter: UsageMeter | None = None
) -> LLMClient:
    """The client for resolved settings, starting the offline server first when needed."""
    if settings.provider != "offline":
        return LLMClient(settings, rng=rng, meter=meter)
    from harness.llm.offline import start_offline_server  # the web stack, only when needed

    server = await asyncio.to_thread(
        start_offline_server, seed=settings.offline.seed, faults=settings.offline.faults
    )
    settings = dataclasses.replace(settings, api_base=server.base_url, api_key="offline")
    return LLMClient(settings, rng=rng, meter=meter, server=server)
