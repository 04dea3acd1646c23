"""The run config's ``llm:`` section, and its resolution against CLI flags and the environment.

Resolution order, field by field: the CLI (``--api-base``, ``--model``) wins, as every other
flag does over the config; then the run config; then the environment (``OPENAI_BASE_URL``, then
``OPENAI_API_BASE``; the key from the variable named by ``api_key_env``).  A config value the
CLI overrides is reported in ``ResolvedLLM.notes`` rather than dropped silently.

The provider defaults to ``offline`` (the shipped mutation-operator server).  When the config
does not name a provider but an endpoint or a model is named (``llm.api_base``, ``--api-base``,
``--model``), the provider is ``openai``.  Environment variables alone never switch a run
online: a stray ``OPENAI_API_KEY`` must not make the quickstart spend money.

A run stores :meth:`ResolvedLLM.as_config` (provider explicit, endpoint and models resolved),
so resuming it resolves to the same endpoint without flags and whatever the environment says.

Secrets never live in the config: ``api_key`` is rejected with a message naming
``api_key_env``, and :class:`ResolvedLLM` keeps the key out of its ``repr``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from harness.core.errors import ConfigError
from harness.core.llm_config import FaultRates, LLMConfig, ModelConfig, OfflineConfig

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
        """One line for logs and the CLI; never includes the key."""
        names = ", ".join(f"{m.name} (weight {m.weight:g})" for m in self.models)
        if self.provider == "offline":
            return f"offline mutation model (not an LLM), seed {self.offline.seed}: {names}"
        return f"{self.api_base}: {names}"


def resolve_llm_config(
    config: LLMConfig,
    *,
    api_base: str | None = None,
    models: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> ResolvedLLM:
    """Merge config, CLI flags (``api_base``, ``models``) and the environment (see module doc)."""
    env = os.environ if env is None else env
    explicit = config.model_fields_set
    notes: list[str] = []
    provider = config.provider
    if api_base or models:
        if "provider" in explicit and provider == "offline":
            notes.append("llm.provider: offline overridden by --api-base/--model")
        provider = "openai"
    elif "provider" not in explicit and config.api_base:
        provider = "openai"

    chosen = tuple(config.models)
    if models:
        if chosen:
            notes.append("llm.models of the run config overridden by --model")
        chosen = tuple(ModelConfig(name=name) for name in models)
    if provider == "offline" and any(m.name != OFFLINE_MODEL for m in chosen):
        notes.append(
            "llm.models names models, but no endpoint is configured: this run uses the offline "
            "mutation model under those names; set llm.api_base (or pass --api-base) to call them"
        )
    if not chosen:
        if provider == "openai":
            raise ConfigError(
                "no model named for the openai provider: pass --model NAME or set llm.models"
            )
        chosen = (ModelConfig(name=OFFLINE_MODEL),)

    base: str | None = None
    key: str | None = "offline"
    if provider == "openai":
        if config.api_base and api_base:
            notes.append("llm.api_base of the run config overridden by --api-base")
        from_env = next((env[k] for k in _BASE_ENV if env.get(k)), None)
        base = api_base or config.api_base or from_env or DEFAULT_OPENAI_BASE
        key = env.get(config.api_key_env) or None

    return ResolvedLLM(
        provider=provider,
        models=chosen,
        guide_models=tuple(config.guide_models),
        api_base=base,
        api_key=key,
        notes=tuple(notes),
        **{name: getattr(config, name) for name in _PASSTHROUGH},
    )
