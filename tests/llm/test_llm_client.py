"""The LLM client over real HTTP: offline server, ensembles, retries, errors and budgets."""

from __future__ import annotations

import random
import socket
from typing import Any

import pytest

from harness.core.errors import BudgetExhausted, LLMError, LLMTimeout, LLMUnavailable
from harness.core.records import Prompt
from harness.llm import (
    LLMClient,
    LLMConfig,
    ModelConfig,
    ResolvedLLM,
    UsageMeter,
    choose_model,
    open_llm,
    resolve_llm_config,
    start_offline_server,
)

PROGRAM = "def f(x):\n    a = 0.5\n    b = 1.25\n    c = 3.0\n    return a * x * x + b * x + c\n"
PROMPT = Prompt(
    system="Answer with blocks:\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE",
    user=f"Improve the program.\n```python\n{PROGRAM}```\n",
)


def settings(base_url: str, **kw: Any) -> ResolvedLLM:
    values: dict[str, Any] = {
        "provider": "openai",
        "models": (ModelConfig(name="m"),),
        "api_base": base_url,
        "api_key": "sk-test-key-123456",
        "retries": 0,
        "retry_backoff_s": 0.01,
        "timeout_s": 5.0,
    }
    values.update(kw)
    return ResolvedLLM(**values)


class Sleeps:
    """Records backoff requests instead of sleeping (behaviour, not wall-clock time)."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def offline(**config: Any) -> ResolvedLLM:
    return resolve_llm_config(LLMConfig.model_validate(config), env={})


async def test_offline_server_answers_through_the_real_client() -> None:
    async with await open_llm(offline(), rng=random.Random(0)) as client:
        info = await client.check_endpoint()
        call = await client.generate(PROMPT, seed=7, purpose="propose")
    assert info.models == ("galapagos-offline",) and info.missing == ()
    assert "offline mutation model" in call.text and "<<<<<<< SEARCH" in call.text
    assert call.model == "galapagos-offline" and call.ok and call.purpose == "propose"
    assert call.prompt_tokens > 0 and call.completion_tokens > 0 and call.cost == 0.0


async def test_same_seed_and_prompt_give_the_same_answer_across_servers() -> None:
    async with await open_llm(offline(), rng=random.Random(0)) as first:
        a = await first.generate(PROMPT, seed=11)
        b = await first.generate(PROMPT, seed=12)
    async with await open_llm(offline(), rng=random.Random(99)) as second:
        a_again = await second.generate(PROMPT, seed=11)
    assert a.text == a_again.text
    assert a.text != b.text


async def test_server_seed_changes_the_answers() -> None:
    async with await open_llm(offline(offline={"seed": 1}), rng=random.Random(0)) as one:
        texts_one = [(await one.generate(PROMPT, seed=s)).text for s in range(3)]
    async with await open_llm(offline(offline={"seed": 2}), rng=random.Random(0)) as two:
        texts_two = [(await two.generate(PROMPT, seed=s)).text for s in range(3)]
    assert texts_one != texts_two


async def test_ensemble_choice_is_seeded_and_checkpointable() -> None:
    config = offline(models=[{"name": "big", "weight": 3.0}, {"name": "small", "weight": 1.0}])

    async def run(client: LLMClient, n: int) -> list[tuple[str, str]]:
        return [((c := await client.generate(PROMPT)).model, c.text) for _ in range(n)]

    async with await open_llm(config, rng=random.Random(5)) as a:
        head = await run(a, 4)
        snapshot = a.state_dict()
        tail = await run(a, 6)
    async with await open_llm(config, rng=random.Random(5)) as b:
        assert await run(b, 4) == head
    async with await open_llm(config, rng=random.Random(12345)) as c:
        c.load_state_dict(snapshot)
        assert await run(c, 6) == tail
    assert {model for model, _ in head + tail} == {"big", "small"}


def test_weighted_choice_follows_the_weights() -> None:
    models = [ModelConfig(name="a", weight=3.0), ModelConfig(name="b", weight=1.0)]
    rng = random.Random(3)
    picks = [choose_model(models, rng).name for _ in range(4000)]
    assert 0.72 < picks.count("a") / len(picks) < 0.78
    zero = [ModelConfig(name="never", weight=0.0), ModelConfig(name="always", weight=1.0)]
    assert {choose_model(zero, rng).name for _ in range(200)} == {"always"}


async def test_seed_and_sampling_parameters_are_sent(scripted: Any) -> None:
    endpoint = scripted(200)
    model = ModelConfig(name="m", temperature=0.2, top_p=0.9, max_tokens=64, extra_body={"k": 1})
    client = LLMClient(settings(endpoint.base_url, models=(model,)), rng=random.Random(0))
    await client.generate(PROMPT, seed=42)
    await client.aclose()
    body = endpoint.requests[0]
    assert body["seed"] == 42 and body["temperature"] == 0.2 and body["top_p"] == 0.9
    assert body["max_tokens"] == 64 and body["k"] == 1
    assert body["messages"][0] == {"role": "system", "content": PROMPT.system}


async def test_transient_errors_are_retried_with_exponential_backoff(scripted: Any) -> None:
    endpoint = scripted(500, {"status": 502, "body": {}}, 200)
    sleeps = Sleeps()
    client = LLMClient(
        settings(endpoint.base_url, retries=3, retry_backoff_s=0.5),
        rng=random.Random(0),
        sleep=sleeps,
    )
    call = await client.generate(PROMPT)
    await client.aclose()
    assert call.text == "hello" and len(endpoint.requests) == 3
    assert sleeps.calls == [0.5, 1.0]
    assert (call.prompt_tokens, call.completion_tokens) == (11, 7)


async def test_rate_limit_honours_retry_after(scripted: Any) -> None:
    endpoint = scripted({"status": 429, "headers": {"retry-after": "3"}}, 200)
    sleeps = Sleeps()
    client = LLMClient(settings(endpoint.base_url, retries=1), rng=random.Random(0), sleep=sleeps)
    assert (await client.generate(PROMPT)).text == "hello"
    await client.aclose()
    assert sleeps.calls == [3.0]


async def test_retries_run_out_into_an_llm_error(scripted: Any) -> None:
    endpoint = scripted(503)
    sleeps = Sleeps()
    client = LLMClient(settings(endpoint.base_url, retries=2), rng=random.Random(0), sleep=sleeps)
    with pytest.raises(LLMError, match="HTTP 503"):
        await client.generate(PROMPT)
    await client.aclose()
    assert len(endpoint.requests) == 3 and len(sleeps.calls) == 2


@pytest.mark.parametrize(
    ("status", "expected"),
    [(401, r"check the API key in \$OPENAI_API_KEY"), (400, "HTTP 400"), (404, "model 'm'")],
)
async def test_client_errors_are_not_retried(scripted: Any, status: int, expected: str) -> None:
    body = {"error": {"message": "Incorrect API key provided: sk-test-key-123456"}}
    endpoint = scripted({"status": status, "body": body})
    sleeps = Sleeps()
    client = LLMClient(settings(endpoint.base_url, retries=3), rng=random.Random(0), sleep=sleeps)
    with pytest.raises(LLMError, match=expected) as caught:
        await client.generate(PROMPT)
    await client.aclose()
    assert type(caught.value) is LLMError
    assert len(endpoint.requests) == 1 and sleeps.calls == []
    assert "sk-test-key-123456" not in str(caught.value)


async def test_missing_usage_is_estimated(scripted: Any) -> None:
    endpoint = scripted({"text": "x" * 40, "usage": False})
    client = LLMClient(settings(endpoint.base_url), rng=random.Random(0))
    call = await client.generate(PROMPT)
    await client.aclose()
    assert call.completion_tokens == 10 and call.prompt_tokens > 0


async def test_slow_endpoint_times_out(scripted: Any) -> None:
    endpoint = scripted({"delay_s": 30.0})
    client = LLMClient(settings(endpoint.base_url, timeout_s=0.3), rng=random.Random(0))
    with pytest.raises(LLMTimeout, match="timed out after 0.3s"):
        await client.generate(PROMPT)
    await client.aclose()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def test_unreachable_endpoint_is_llm_unavailable_with_a_clear_message() -> None:
    base = f"http://127.0.0.1:{_free_port()}/v1"
    sleeps = Sleeps()
    client = LLMClient(settings(base, retries=2), rng=random.Random(0), sleep=sleeps)
    with pytest.raises(LLMUnavailable) as caught:
        await client.generate(PROMPT)
    message = str(caught.value)
    assert base in message and "connection refused" in message and "\n" not in message
    assert len(sleeps.calls) == 2  # a restarting server gets its retries
    with pytest.raises(LLMUnavailable, match="OPENAI_BASE_URL"):
        await client.check_endpoint()
    await client.aclose()


async def test_an_error_masks_credentials_in_the_endpoint_url() -> None:
    # Some gateways take credentials in the URL; an error text reaches the store and the hub.
    port = _free_port()
    base = f"http://user:hunter2-pass@127.0.0.1:{port}/v1?api-key=sk-url-secret-99"
    client = LLMClient(settings(base), rng=random.Random(0), sleep=Sleeps())
    with pytest.raises(LLMUnavailable) as caught:
        await client.generate(PROMPT)
    message = str(caught.value)
    assert f"127.0.0.1:{port}" in message and "***" in message
    assert "hunter2-pass" not in message and "sk-url-secret-99" not in message
    await client.aclose()


async def test_check_endpoint_reports_models_the_endpoint_does_not_list() -> None:
    with start_offline_server() as server:
        models = (ModelConfig(name="galapagos-offline"), ModelConfig(name="gpt-x"))
        client = LLMClient(settings(server.base_url, models=models), rng=random.Random(0))
        info = await client.check_endpoint()
        await client.aclose()
    assert info.missing == ("gpt-x",)


async def test_token_budget_stops_before_the_next_call() -> None:
    with start_offline_server() as server:
        meter = UsageMeter(max_total_tokens=50)
        client = LLMClient(settings(server.base_url), rng=random.Random(0), meter=meter)
        call = await client.generate(PROMPT)
        assert meter.total_tokens == call.prompt_tokens + call.completion_tokens >= 50
        with pytest.raises(BudgetExhausted, match="max_total_tokens=50"):
            await client.generate(PROMPT)
        await client.aclose()
        assert server.requests == 1


async def test_cost_budget_uses_model_prices() -> None:
    model = ModelConfig(name="m", input_cost_per_mtok=1e6, output_cost_per_mtok=2e6)
    with start_offline_server() as server:
        client = LLMClient(
            settings(server.base_url, models=(model,), max_cost=1.0), rng=random.Random(0)
        )
        call = await client.generate(PROMPT)
        assert call.cost == pytest.approx(call.prompt_tokens + 2 * call.completion_tokens)
        with pytest.raises(BudgetExhausted, match="max_cost=1"):
            await client.generate(PROMPT)
        await client.aclose()


def test_usage_meter_round_trips_its_totals() -> None:
    meter = UsageMeter(max_total_tokens=100)
    meter.prompt_tokens, meter.completion_tokens, meter.cost, meter.calls = 60, 30, 0.5, 3
    restored = UsageMeter(max_total_tokens=100)
    restored.load_state_dict(meter.state_dict())
    assert restored.state_dict() == meter.state_dict()
    restored.check()  # 90 < 100
    restored.completion_tokens += 10
    with pytest.raises(BudgetExhausted):
        restored.check()


async def test_seeded_handle_satisfies_the_proposer_protocol() -> None:
    async with await open_llm(offline(), rng=random.Random(0)) as client:
        bound = client.bind(seed=3)
        first = await bound.generate(PROMPT)
        direct = await client.generate(PROMPT, seed=3)
    assert first.text == direct.text
