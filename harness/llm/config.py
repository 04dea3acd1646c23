"""The run config's ``llm:`` section, and its resolution against CLI flags and the environment.

Resolution order, field by field: the caller's endpoint settings (the CLI's ``--api-base``,
``--model``) win, as every setting does over the config; then the run config; then the
environment (``OPENAI_BASE_URL``, then ``OPENAI_API_BASE``; the key from the variable named by
``api_key_env``).  A config value the caller overrides is reported in ``ResolvedLLM.notes``
rather than dropped silently.

The provider defaults to ``offline`` (the shipped mutation-operator server).  When the config
does not name a provider but an endpoint or a model is named (``llm.api_base``, ``--api-base``,
``--model``), the provider is ``openai``.  Environment variables alone never switch a run
online: a stray ``OPENAI_API_KEY`` must not make the quickstart spend money.

A run stores :meth:`ResolvedLLM.as_config` (provider explicit, endpoint and models resolved),
so resuming it resolves to the same endpoint without flags and whatever the environment says.

Secrets never live in the config: ``api_key`` is rejected with a message naming
``api_key_env``, and :class:`ResolvedLLM` keeps the key out of its ``repr``.

Prices: a model without its own ``input_cost_per_mtok``/``output_cost_per_mtok`` gets them from
the price table (:mod:`harness.llm.prices`); the offline model is free.  ``max_cost`` with a
model whose price stays unknown is a :class:`ConfigError`, as is an ``api_base`` that is not an
http(s) URL.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urlsplit

from harness.core.config_layers import Names, named
from harness.core.errors import ConfigError
from harness.core.llm_config import FaultRates, LLMConfig, ModelConfig, OfflineConfig
from harness.core.redact import redact_url
from harness.llm.prices import load_prices, price_models, require_prices, unpriced

__all__ = [
    "GUIDE_PURPOSES",
    "FaultRates",
    "LLMConfig",
    "ModelConfig",
    "OfflineConfig",
    "PURPOSE_HEADER",
    "ResolvedLLM",
    "resolve_llm_config",
]

OFFLINE_MODEL = "galapagos-offline"
DEFAULT_OPENAI_BASE = "https://api.openai.com/v1"
_BASE_ENV = ("OPENAI_BASE_URL", "OPENAI_API_BASE")


#: Settings that pass unchanged between the config and the resolved settings, both ways.
_PASSTHROUGH = (
    "api_key_env",
    "timeout_s",
    "retries",
    "retry_backoff_s",
    "send_seed",
    "max_total_tokens",
    "max_cost",
    "offline",
    "price_table",
)
#: Call purposes that use ``llm.guide_models`` when some are configured.
GUIDE_PURPOSES = frozenset({"guide", "paradigm"})
#: The request header carrying a call's purpose (request metadata, never prompt text): the
#: offline model answers by it.  A header, not a body field: endpoints ignore headers they do
#: not know, while some (OpenAI) refuse unknown body fields.
PURPOSE_HEADER = "X-Galapagos-Purpose"


@dataclass(frozen=True)
class ResolvedLLM:
    """Everything the client needs, after config, CLI and environment were merged."""

    provider: Literal["offline", "openai"]
    models: tuple[ModelConfig, ...]
    guide_models: tuple[ModelConfig, ...] = ()
    api_base: str | None = None
    api_key: str | None = field(default=None, repr=False)
    api_key_env: str = "OPENAI_API_KEY"
    timeout_s: float = 600.0
    retries: int = 3
    retry_backoff_s: float = 2.0
    send_seed: bool = True
    max_total_tokens: int | None = None
    max_cost: float | None = None
    offline: OfflineConfig = field(default_factory=OfflineConfig)
    price_table: str | None = None
    notes: tuple[str, ...] = ()

    def as_config(self) -> LLMConfig:
        """The settings to store with a run: the provider explicit, the endpoint and models as
        resolved (CLI flags and environment folded in), never the key.  Resolving the result
        again with no flags gives these same settings, so a resumed run talks to the same
        endpoint and models."""
        return LLMConfig(
            provider=self.provider,
            api_base=self.api_base if self.provider == "openai" else None,
            models=list(self.models),
            guide_models=list(self.guide_models),
            **{name: getattr(self, name) for name in _PASSTHROUGH},
        )

    def describe(self) -> str:
        """One line for logs and the CLI; never includes the key (nor credentials in the URL)."""
        names = ", ".join(f"{m.name} (weight {m.weight:g})" for m in self.models)
        if self.provider == "offline":
            return f"offline mutation model (not an LLM), seed {self.offline.seed}: {names}"
        line = f"{redact_url(self.api_base or '')}: {names}"
        missing = unpriced([*self.models, *self.guide_models])
        if missing:
            line += f"; price unknown for {', '.join(missing)} (cost not counted)"
        return line


def resolve_llm_config(
    config: LLMConfig,
    *,
    api_base: str | None = None,
    models: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    names: Names | None = None,
) -> ResolvedLLM:
    """Merge config, the caller's endpoint settings (``api_base``, ``models``; ``names`` says
    how the caller calls them, the CLI's ``--api-base``/``--model``) and the environment (see
    the module doc)."""
    env = os.environ if env is None else env
    notes: list[str] = []
    provider = _provider(config, bool(api_base or models), notes, names)
    chosen = _chosen_models(config, models, provider, notes, names)
    guides = tuple(config.guide_models)
    passthrough = {name: getattr(config, name) for name in _PASSTHROUGH}
    base: str | None = None
    key: str | None = "offline"
    if provider == "openai":
        base, key, chosen, guides, reviewed = _online(config, api_base, chosen, env, notes, names)
        passthrough["price_table"] = config.price_table or reviewed
    else:  # the offline model costs nothing
        chosen, guides = _free(chosen), _free(guides)
    return ResolvedLLM(
        provider=provider,
        models=chosen,
        guide_models=guides,
        api_base=base,
        api_key=key,
        notes=tuple(notes),
        **passthrough,
    )


def _online(
    config: LLMConfig,
    api_base: str | None,
    chosen: tuple[ModelConfig, ...],
    env: Mapping[str, str],
    notes: list[str],
    names: Names | None,
) -> tuple[str, str | None, tuple[ModelConfig, ...], tuple[ModelConfig, ...], str]:
    """An endpoint's URL and key, the models priced from the price table, and the table's
    review date."""
    if config.api_base and api_base:
        notes.append(f"llm.api_base of the run config overridden by {named(names, 'api_base')}")
    from_env = next((env[k] for k in _BASE_ENV if env.get(k)), None)
    base = check_url(api_base or config.api_base or from_env or DEFAULT_OPENAI_BASE, names)
    table = load_prices(env)
    models = price_models(chosen, table)
    guides = price_models(tuple(config.guide_models), table)
    require_prices([*models, *guides], config.max_cost, table.reviewed)
    return base, env.get(config.api_key_env) or None, models, guides, table.reviewed


def _provider(
    config: LLMConfig, endpoint_given: bool, notes: list[str], names: Names | None
) -> Literal["offline", "openai"]:
    """``openai`` when an endpoint or model is given, or the config names an endpoint and no
    provider; else the config's provider."""
    explicit = "provider" in config.model_fields_set
    if endpoint_given:
        if explicit and config.provider == "offline":
            notes.append(
                f"llm.provider: offline overridden by {named(names, 'api_base')}/"
                f"{named(names, 'models')}"
            )
        return "openai"
    if not explicit and config.api_base:
        return "openai"
    return config.provider


def _chosen_models(
    config: LLMConfig,
    models: Sequence[str],
    provider: str,
    notes: list[str],
    names: Names | None,
) -> tuple[ModelConfig, ...]:
    """The models the run uses: the given names, else the config's, else (offline) ours."""
    chosen = tuple(config.models)
    if models:
        if chosen:
            notes.append(f"llm.models of the run config overridden by {named(names, 'models')}")
        chosen = tuple(ModelConfig(name=name) for name in models)
    if provider == "offline" and any(m.name != OFFLINE_MODEL for m in chosen):
        notes.append(
            "llm.models names models, but no endpoint is configured: this run uses the offline "
            f"mutation model under those names; set llm.api_base (or {named(names, 'api_base')})"
            " to call them"
        )
    if chosen:
        return chosen
    if provider == "openai":
        raise ConfigError(
            f"no model named for the openai provider: set llm.models (or {named(names, 'models')})"
        )
    return (ModelConfig(name=OFFLINE_MODEL),)


def _free(models: Sequence[ModelConfig]) -> tuple[ModelConfig, ...]:
    return tuple(
        m.model_copy(
            update={
                "input_cost_per_mtok": m.input_cost_per_mtok or 0.0,
                "output_cost_per_mtok": m.output_cost_per_mtok or 0.0,
            }
        )
        for m in models
    )


def check_url(url: str, names: Names | None = None) -> str:
    """``url`` when it is an http(s) URL with a host, else a one-line :class:`ConfigError`
    (``names``: how the caller calls the ``api_base`` setting)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a malformed port
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(
            f"the LLM endpoint {redact_url(url)!r} is not an http(s) URL; give a base URL such as "
            f"http://localhost:8000/v1 or https://api.openai.com/v1 ({named(names, 'api_base')}, "
            "llm.api_base or OPENAI_BASE_URL)"
        )
    return url
