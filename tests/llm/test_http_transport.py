"""The client's own HTTP transport against real loopback servers: what goes on the wire, and how
every kind of answer (statuses, Retry-After, malformed bodies, /models) maps to harness errors."""

from __future__ import annotations

import random
import socket
import threading
from typing import Any

import pytest

from harness.core.errors import LLMError, LLMUnavailable
from harness.llm import (
    LLMClient,
    LLMConfig,
    ModelConfig,
    estimate_tokens,
    open_llm,
    resolve_llm_config,
)
from harness.llm.config import PURPOSE_HEADER
from tests.llm.test_llm_client import PROMPT, Sleeps, _free_port, settings

KEY = "sk-test-key-123456"


def client_for(base_url: str, **kw: Any) -> tuple[LLMClient, Sleeps]:
    sleeps = Sleeps()
    return LLMClient(settings(base_url, **kw), rng=random.Random(0), sleep=sleeps), sleeps


async def test_the_request_carries_the_body_and_headers_the_sdk_sent(scripted: Any) -> None:
    endpoint = scripted(200)
    model = ModelConfig(
        name="m", temperature=0.2, top_p=0.9, max_tokens=64, extra_body={"k": 1, "top_p": 0.5}
    )
    client, _ = client_for(endpoint.base_url, models=(model,))
    await client.generate(PROMPT, seed=42, purpose="insight")
    await client.aclose()
    assert endpoint.requests[0] == {
        "model": "m",
        "messages": [
            {"role": "system", "content": PROMPT.system},
            {"role": "user", "content": PROMPT.user},
        ],
        "seed": 42,
        "temperature": 0.2,
        "top_p": 0.5,  # extra_body is merged over the fields (as the SDK's extra_body)
        "max_tokens": 64,
        "k": 1,
    }
    seen = endpoint.seen[0]
    headers = {k.lower(): v for k, v in seen.headers.items()}
    assert (seen.method, seen.path) == ("POST", "/v1/chat/completions")
    assert headers["authorization"] == f"Bearer {KEY}"
    assert headers["content-type"] == "application/json"
    assert headers["accept"] == "application/json"
    assert headers[PURPOSE_HEADER.lower()] == "insight"


async def test_a_seed_is_not_sent_when_the_config_says_so(scripted: Any) -> None:
    endpoint = scripted(200)
    model = ModelConfig(name="m", temperature=None)  # null: not sent (the endpoint's default)
    client, _ = client_for(endpoint.base_url, models=(model,), send_seed=False)
    await client.generate(PROMPT, seed=42)
    await client.aclose()
    assert set(endpoint.requests[0]) == {"model", "messages"}


async def test_a_query_in_the_api_base_stays_after_the_path(scripted: Any) -> None:
    endpoint = scripted(200)  # Azure-style ?api-version=…
    client, _ = client_for(endpoint.base_url + "?api-version=2024-10-21")
    await client.generate(PROMPT)
    await client.check_endpoint()
    await client.aclose()
    assert [s.path for s in endpoint.seen] == [
        "/v1/chat/completions?api-version=2024-10-21",
        "/v1/models?api-version=2024-10-21",
    ]


async def test_organisation_and_project_headers_come_from_the_environment(
    scripted: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_ORG_ID", "org-123")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-456")
    endpoint = scripted(200)
    client, _ = client_for(endpoint.base_url)
    await client.generate(PROMPT)
    await client.aclose()
    headers = {k.lower(): v for k, v in endpoint.seen[0].headers.items()}
    assert headers["openai-organization"] == "org-123" and headers["openai-project"] == "proj-456"


def _proxy_env(monkeypatch: pytest.MonkeyPatch, proxy: str) -> None:
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    for name in ("HTTP_PROXY", "http_proxy"):
        monkeypatch.setenv(name, proxy)


async def test_an_endpoint_goes_through_the_proxy_of_the_environment(
    scripted: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    proxy = scripted({"text": "via the proxy"})
    _proxy_env(monkeypatch, proxy.base_url.removesuffix("/v1"))
    client, _ = client_for("http://llm.invalid/v1")
    call = await client.generate(PROMPT)
    await client.aclose()
    assert call.text == "via the proxy"
    assert proxy.seen[0].path == "http://llm.invalid/v1/chat/completions"  # absolute form


async def test_the_offline_server_ignores_the_proxy_of_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _proxy_env(monkeypatch, f"http://127.0.0.1:{_free_port()}")  # a proxy that is down
    config = resolve_llm_config(LLMConfig.model_validate({}), env={})
    async with await open_llm(config, rng=random.Random(0)) as client:
        await client.check_endpoint()
        assert (await client.generate(PROMPT)).text


async def test_a_redirect_is_followed(scripted: Any) -> None:
    endpoint = scripted({"status": 307, "body": {}, "headers": {"location": "/v2/chat"}}, 200)
    client, _ = client_for(endpoint.base_url)
    assert (await client.generate(PROMPT)).text == "hello"
    await client.aclose()
    assert [s.path for s in endpoint.seen] == ["/v1/chat/completions", "/v2/chat"]


@pytest.mark.parametrize(
    ("status", "retried"),
    [(408, True), (409, True), (429, True), (500, True), (502, True), (503, True),
     (400, False), (401, False), (403, False), (404, False), (422, False)],
)  # fmt: skip
async def test_which_statuses_are_retried(scripted: Any, status: int, retried: bool) -> None:
    endpoint = scripted(status, 200)
    client, sleeps = client_for(endpoint.base_url, retries=1, retry_backoff_s=0.25)
    if retried:
        assert (await client.generate(PROMPT)).text == "hello"
        assert sleeps.calls == [0.25] and len(endpoint.requests) == 2
    else:
        with pytest.raises(LLMError, match=f"HTTP {status}"):
            await client.generate(PROMPT)
        assert sleeps.calls == [] and len(endpoint.requests) == 1
    await client.aclose()


@pytest.mark.parametrize(
    ("retry_after", "slept"),
    [("3", 3.0), ("0.5", 0.5), ("500", 60.0), ("Wed, 21 Oct 2026 07:28:00 GMT", 0.25)],
)
async def test_retry_after_sets_the_wait(scripted: Any, retry_after: str, slept: float) -> None:
    endpoint = scripted({"status": 429, "headers": {"Retry-After": retry_after}}, 200)
    client, sleeps = client_for(endpoint.base_url, retries=1, retry_backoff_s=0.25)
    await client.generate(PROMPT)
    await client.aclose()
    assert sleeps.calls == [slept]  # capped at 60 s; a date falls back to the backoff


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (401, {"error": {"message": f"bad {KEY}"}}, r"authentication failed at .* \(HTTP 401\)"),
        (403, {"error": {"message": "no"}}, r"authentication failed at .* \(HTTP 403\)"),
        (404, {"error": {"message": f"no model m for {KEY}"}},
         r"not found \(HTTP 404\).*Server said: Error code: 404 - no model m for \*\*\*$"),
        (400, {"message": "top-level message"}, r"HTTP 400: Error code: 400 - top-level message$"),
        (400, b"plain text, not JSON", r"HTTP 400: Error code: 400$"),
        (500, {"error": "a string, no message"}, r"HTTP 500: Error code: 500$"),
    ],
)  # fmt: skip
async def test_an_error_status_names_what_the_server_said(
    scripted: Any, status: int, body: Any, expected: str
) -> None:
    endpoint = scripted({"status": status, "body": body})
    client, _ = client_for(endpoint.base_url)
    with pytest.raises(LLMError, match=expected) as caught:
        await client.generate(PROMPT)
    await client.aclose()
    assert type(caught.value) is LLMError and KEY not in str(caught.value)


async def test_an_error_status_masks_credentials_in_the_endpoint_url(scripted: Any) -> None:
    endpoint = scripted(500)
    base = endpoint.base_url.replace("http://", "http://user:hunter2-pass@") + "?key=sk-url-99"
    client, _ = client_for(base)
    with pytest.raises(LLMError, match="HTTP 500") as caught:
        await client.generate(PROMPT)
    await client.aclose()
    message = str(caught.value)
    assert "hunter2-pass" not in message and "sk-url-99" not in message and "***" in message


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"<html>a proxy's error page</html>", "returned a response that is not JSON"),
        (b"", "returned a response that is not JSON"),
        (b"\xff\xfe\xfa", "returned a response that is not JSON"),
        ([1, 2], "returned a response that is not a JSON object"),
        ({}, "returned no choices"),
        ({"choices": []}, "returned no choices"),
        ({"choices": [{}]}, "returned a choice without a message"),
        ({"choices": "text"}, "returned a choice without a message"),
        (
            {"choices": [{"message": {"content": 5}}]},
            "returned a message whose content is not text",
        ),
    ],
)
async def test_a_malformed_answer_is_a_one_line_llm_error_not_retried(
    scripted: Any, body: Any, expected: str
) -> None:
    endpoint = scripted({"body": body, "headers": {"content-type": "text/html"}})
    client, sleeps = client_for(endpoint.base_url, retries=3)
    with pytest.raises(LLMError) as caught:
        await client.generate(PROMPT)
    await client.aclose()
    assert str(caught.value) == f"model 'm' at {endpoint.base_url} {expected}"
    assert type(caught.value) is LLMError
    assert len(endpoint.requests) == 1 and sleeps.calls == []


async def test_null_content_is_empty_text_and_missing_counts_are_estimated(scripted: Any) -> None:
    endpoint = scripted(
        {"body": {"choices": [{"message": {"content": None}}], "usage": {"prompt_tokens": 9}}},
        {"body": {"choices": [{"message": {"content": "x" * 40}}], "usage": {}}},
    )
    client, _ = client_for(endpoint.base_url)
    empty = await client.generate(PROMPT)
    estimated = await client.generate(PROMPT)
    await client.aclose()
    assert (empty.text, empty.prompt_tokens, empty.completion_tokens) == ("", 9, 0)
    assert estimated.completion_tokens == 10
    assert estimated.prompt_tokens == estimate_tokens(PROMPT.system + PROMPT.user)


async def test_models_listed_by_the_endpoint_are_checked(scripted: Any) -> None:
    endpoint = scripted({"body": {"object": "list", "data": [{"id": "m"}, {"id": "other"}, {}]}})
    client, _ = client_for(endpoint.base_url, models=(ModelConfig(name="m"), ModelConfig(name="x")))
    info = await client.check_endpoint()
    await client.aclose()
    assert (info.models, info.missing) == (("m", "other"), ("x",))
    assert [(s.method, s.path) for s in endpoint.seen] == [("GET", "/v1/models")]


async def test_an_endpoint_without_a_model_list_must_answer_a_chat_probe(scripted: Any) -> None:
    endpoint = scripted(404, 200)
    client, _ = client_for(endpoint.base_url)
    info = await client.check_endpoint()
    await client.aclose()
    assert info.models == () and info.missing == ()
    assert [(s.method, s.path) for s in endpoint.seen] == [
        ("GET", "/v1/models"),
        ("POST", "/v1/chat/completions"),
    ]
    assert endpoint.requests[1]["max_tokens"] == 1


@pytest.mark.parametrize(
    ("steps", "error", "expected"),
    [
        ((404, 405), LLMUnavailable, "does not speak the OpenAI chat-completions protocol"),
        ((404, {"body": {}}), LLMUnavailable, "answered POST /chat/completions without choices"),
        (({"body": b"<html>"}, {"body": b"<html>"}), LLMUnavailable, "without choices"),
        (({"body": [1]}, 501), LLMUnavailable, r"POST /chat/completions: HTTP 501"),
        ((404, 401), LLMError, r"authentication failed .*\$OPENAI_API_KEY"),
        ((401,), LLMError, r"authentication failed .*\(HTTP 401\)"),
        ((500,), LLMError, "HTTP 500"),
    ],
)
async def test_an_endpoint_that_is_not_an_llm_is_refused_by_the_check(
    scripted: Any, steps: tuple[Any, ...], error: type[Exception], expected: str
) -> None:
    endpoint = scripted(*steps)
    client, _ = client_for(endpoint.base_url, retries=3)
    with pytest.raises(error, match=expected) as caught:
        await client.check_endpoint()
    await client.aclose()
    assert "\n" not in str(caught.value)
    assert len(endpoint.seen) == len(steps)  # never retried


async def test_the_check_times_out_on_a_slow_endpoint(scripted: Any) -> None:
    endpoint = scripted({"delay_s": 30.0})
    client, _ = client_for(endpoint.base_url)
    with pytest.raises(LLMError, match="timed out"):
        await client.check_endpoint(timeout_s=0.3)
    await client.aclose()


async def test_a_connection_closed_without_an_answer_is_unavailable_and_retried() -> None:
    with socket.socket() as listener:  # accepts, reads the request, hangs up without a word
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        stop = threading.Event()

        def hang_up() -> None:
            listener.settimeout(0.05)
            while not stop.is_set():
                try:
                    conn, _ = listener.accept()
                except TimeoutError:
                    continue
                with conn:
                    conn.recv(65536)

        thread = threading.Thread(target=hang_up, daemon=True)
        thread.start()
        client, sleeps = client_for(f"http://127.0.0.1:{listener.getsockname()[1]}/v1", retries=2)
        try:
            with pytest.raises(LLMUnavailable, match="is unreachable"):
                await client.generate(PROMPT)
        finally:
            await client.aclose()
            stop.set()
            thread.join(timeout=5)
    assert len(sleeps.calls) == 2
