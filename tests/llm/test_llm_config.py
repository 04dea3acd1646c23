"""The llm: config section: strict validation and config > CLI > environment resolution."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from harness.core.errors import ConfigError
from harness.llm import LLMConfig, resolve_llm_config
from harness.llm.config import DEFAULT_OPENAI_BASE, OFFLINE_MODEL


def test_defaults_resolve_to_the_offline_model() -> None:
    resolved = resolve_llm_config(LLMConfig(), env={"OPENAI_API_KEY": "sk-real"})
    assert resolved.provider == "offline"
    assert [m.name for m in resolved.models] == [OFFLINE_MODEL]
    assert resolved.api_key != "sk-real"  # a key in the environment never switches a run online


@pytest.mark.parametrize(
    "data",
    [
        {"modles": []},
        {"models": [{"name": "m", "wieght": 1}]},
        {"timeout_s": "10"},
        {"provider": "anthropic"},
        {"offline": {"faults": {"malformed": 0.7, "noop": 0.5}}},
        {"models": [{"name": "a", "weight": 0}]},
        {"provider": "offline", "api_base": "http://x/v1"},
    ],
)
def test_invalid_sections_are_rejected(data: dict) -> None:
    with pytest.raises(ValidationError):
        LLMConfig.model_validate(data)


def test_api_key_in_config_is_refused_with_a_pointer_to_the_environment() -> None:
    with pytest.raises(ValidationError, match="api_key_env"):
        LLMConfig.model_validate({"provider": "openai", "api_key": "sk-123"})


def test_cli_model_switches_to_openai_with_the_base_from_the_environment() -> None:
    env = {"OPENAI_BASE_URL": "http://gpu:8000/v1", "OPENAI_API_KEY": "sk-x"}
    resolved = resolve_llm_config(LLMConfig(), models=["qwen", "llama"], env=env)
    assert resolved.provider == "openai"
    assert [m.name for m in resolved.models] == ["qwen", "llama"]
    assert resolved.api_base == "http://gpu:8000/v1" and resolved.api_key == "sk-x"


def test_legacy_base_variable_and_default_base() -> None:
    legacy = resolve_llm_config(LLMConfig(), models=["m"], env={"OPENAI_API_BASE": "http://o/v1"})
    assert legacy.api_base == "http://o/v1"
    plain = resolve_llm_config(LLMConfig(), models=["m"], env={})
    assert plain.api_base == DEFAULT_OPENAI_BASE and plain.api_key is None


def test_cli_beats_config_beats_environment_and_overrides_are_reported() -> None:
    config = LLMConfig.model_validate(
        {"api_base": "http://config/v1", "models": [{"name": "from-config"}]}
    )
    env = {"OPENAI_BASE_URL": "http://env/v1"}
    flags = {"api_base": "--api-base", "models": "--model"}
    resolved = resolve_llm_config(
        config, api_base="http://cli/v1", models=["from-cli"], env=env, names=flags
    )
    assert resolved.provider == "openai"
    assert resolved.api_base == "http://cli/v1"
    assert [m.name for m in resolved.models] == ["from-cli"]
    assert any("overridden by --api-base" in n for n in resolved.notes)
    assert any("overridden by --model" in n for n in resolved.notes)
    # The library names the caller's settings by their keywords unless told the CLI's flags.
    plain = resolve_llm_config(config, api_base="http://cli/v1", models=["from-cli"], env=env)
    assert "llm.models of the run config overridden by models" in plain.notes
    assert not any("--" in note for note in plain.notes)
    from_config = resolve_llm_config(config, env=env)
    assert from_config.api_base == "http://config/v1" and not from_config.notes
    from_env = resolve_llm_config(LLMConfig(), models=["m"], env=env)
    assert from_env.api_base == "http://env/v1"


def test_openai_without_a_model_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"set llm.models \(or --model\)$"):
        resolve_llm_config(LLMConfig(provider="openai"), env={}, names={"models": "--model"})
    with pytest.raises(ConfigError, match=r"set llm.models \(or models\)$"):
        resolve_llm_config(LLMConfig(provider="openai"), env={})


def test_a_bad_endpoint_url_names_the_setting_as_the_caller_calls_it() -> None:
    with pytest.raises(ConfigError) as cli:
        resolve_llm_config(
            LLMConfig(), api_base="localhost:8000", models=["m"], env={},
            names={"api_base": "--api-base"},
        )  # fmt: skip
    assert "is not an http(s) URL" in str(cli.value) and "(--api-base, llm.api_base" in str(
        cli.value
    )
    with pytest.raises(ConfigError) as library:
        resolve_llm_config(LLMConfig(), api_base="ftp://x/v1", models=["m"], env={})
    assert "(api_base, llm.api_base or OPENAI_BASE_URL)" in str(library.value)
    assert "--api-base" not in str(library.value)


def test_cli_endpoint_overrides_an_explicit_offline_provider_with_a_note() -> None:
    resolved = resolve_llm_config(
        LLMConfig(provider="offline"), api_base="http://x/v1", models=["m"], env={}
    )
    assert resolved.provider == "openai" and resolved.api_base == "http://x/v1"
    assert any("offline overridden" in n for n in resolved.notes)


def test_key_comes_from_the_named_variable_and_stays_out_of_repr() -> None:
    config = LLMConfig.model_validate(
        {"provider": "openai", "api_key_env": "MY_KEY", "models": [{"name": "m"}]}
    )
    resolved = resolve_llm_config(config, env={"MY_KEY": "sk-secret-value"})
    assert resolved.api_key == "sk-secret-value"
    assert "sk-secret-value" not in repr(resolved)
    assert "sk-secret-value" not in resolved.describe()


def test_model_cost_per_million_tokens() -> None:
    config = LLMConfig.model_validate(
        {"models": [{"name": "m", "input_cost_per_mtok": 2.0, "output_cost_per_mtok": 8}]}
    )
    assert config.models[0].cost(1_000_000, 500_000) == pytest.approx(6.0)


def test_models_without_an_endpoint_leave_a_note() -> None:
    from harness.llm.config import LLMConfig, resolve_llm_config

    resolved = resolve_llm_config(
        LLMConfig.model_validate({"models": [{"name": "gpt-4.1-mini"}]}), env={}
    )
    assert resolved.provider == "offline"
    assert any("no endpoint is configured" in note for note in resolved.notes)
    plain = resolve_llm_config(LLMConfig(), env={})
    assert not plain.notes
