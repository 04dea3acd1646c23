"""The price table: dated, matched by name the way providers spell names, overridable per model
and by a user's table; a cost cap that cannot be enforced is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.core.errors import ConfigError
from harness.llm.config import LLMConfig, ModelConfig, resolve_llm_config
from harness.llm.prices import load_prices, normalise_name

BASE = "http://127.0.0.1:8000/v1"


def test_the_shipped_table_is_dated_and_prices_common_models() -> None:
    table = load_prices({})
    assert table.reviewed[:4].isdigit() and len(table.reviewed) == 10  # YYYY-MM-DD
    price = table.lookup("gpt-4.1-mini")
    assert price is not None and (price.input, price.output) == (0.40, 1.60)
    for name in ("gpt-5", "claude-sonnet-4-5", "gemini-2.5-pro", "deepseek-chat"):
        assert table.lookup(name) is not None, name


@pytest.mark.parametrize(
    ("spelled", "listed"),
    [
        ("openai/gpt-4.1-mini", "gpt-4.1-mini"),
        ("gpt-4.1-mini-2025-04-14", "gpt-4.1-mini"),
        ("anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("models/gemini-2.5-flash", "gemini-2.5-flash"),
        ("GPT-4o-latest", "gpt-4o"),
    ],
)
def test_names_are_matched_as_providers_spell_them(spelled: str, listed: str) -> None:
    assert normalise_name(spelled) == normalise_name(listed)
    assert load_prices({}).lookup(spelled) == load_prices({}).lookup(listed)


def test_a_users_table_adds_and_corrects(tmp_path: Path) -> None:
    mine = tmp_path / "prices.yaml"
    mine.write_text(
        "reviewed: 2027-01-02\nmodels:\n  my-model: {input: 1, output: 2}\n"
        "  gpt-4.1-mini: {input: 0.5, output: 2.0}\n"
    )
    table = load_prices({"GALAPAGOS_PRICES": str(mine)})
    assert table.lookup("my-model") is not None and table.lookup("gpt-4.1-mini").input == 0.5
    assert "2027-01-02" in table.reviewed
    mine.write_text("models:\n  bad: {input: cheap}\n")
    with pytest.raises(ConfigError, match="numeric 'input' and 'output'"):
        load_prices({"GALAPAGOS_PRICES": str(mine)})


def test_resolution_fills_prices_and_the_config_wins() -> None:
    config = LLMConfig(
        models=[
            ModelConfig(name="gpt-4.1-mini"),
            ModelConfig(name="gpt-4o", input_cost_per_mtok=9.0),
        ]
    )
    resolved = resolve_llm_config(config, api_base=BASE, env={})
    mini, four_o = resolved.models
    assert (mini.input_cost_per_mtok, mini.output_cost_per_mtok) == (0.40, 1.60)
    assert (four_o.input_cost_per_mtok, four_o.output_cost_per_mtok) == (9.0, 10.0)
    assert resolved.price_table == load_prices({}).reviewed
    assert mini.cost(1_000_000, 1_000_000) == pytest.approx(2.0)
    stored = resolved.as_config()  # what the run stores: the prices it used, and their date
    assert stored.models[0].input_cost_per_mtok == 0.40 and stored.price_table


def test_the_offline_model_is_free_and_priced() -> None:
    resolved = resolve_llm_config(LLMConfig(), env={})
    assert resolved.models[0].priced and resolved.models[0].cost(10**6, 10**6) == 0.0


def test_an_unknown_price_leaves_the_cost_unknown_and_refuses_a_cost_cap() -> None:
    unknown = LLMConfig(models=[ModelConfig(name="Qwen/Qwen2.5-Coder-32B-Instruct")])
    resolved = resolve_llm_config(unknown, api_base=BASE, env={})
    assert not resolved.models[0].priced
    assert "price unknown for Qwen/Qwen2.5-Coder-32B-Instruct" in resolved.describe()
    capped = unknown.model_copy(update={"max_cost": 0.5})
    with pytest.raises(ConfigError) as caught:
        resolve_llm_config(capped, api_base=BASE, env={})
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("llm.max_cost=0.5 cannot be enforced: the price of Qwen/")
    assert "input_cost_per_mtok" in message and "--max-tokens" in message


@pytest.mark.parametrize("url", ["not-a-url", "ftp://host/v1", "http://", "localhost:8000/v1"])
def test_an_endpoint_must_be_an_http_url(url: str) -> None:
    with pytest.raises(ConfigError, match="is not an http\\(s\\) URL"):
        resolve_llm_config(LLMConfig(), api_base=url, models=("m",), env={})
