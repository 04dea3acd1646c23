"""The run config's ``llm:`` section (pure models; resolution lives in :mod:`harness.llm.config`).

Defined in ``core`` because :class:`~harness.core.config.RunConfig` holds it; the ``llm`` package
implements what it configures.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["FaultRates", "LLMConfig", "ModelConfig", "OfflineConfig"]

_STRICT = ConfigDict(extra="forbid", strict=True, frozen=True)


class ModelConfig(BaseModel):
    """One model of the ensemble.  ``None`` sampling values are not sent (endpoint default)."""

    model_config = _STRICT

    #: The model name the endpoint knows.
    name: str = Field(min_length=1)
    #: Share of the calls (one model is drawn per call, in proportion to the weights).
    weight: float = Field(default=1.0, ge=0.0)
    #: Sampling temperature; null = do not send (the endpoint's default).
    temperature: float | None = Field(default=0.7, ge=0.0)
    #: Completion token cap; null = do not send.
    max_tokens: int | None = Field(default=None, gt=0)
    #: Nucleus sampling; null = do not send.
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    #: Price per million prompt tokens (USD), for cost accounting and llm.max_cost; null:
    #: from the price table (``harness/llm/prices.yaml``), unknown if the table lacks it.
    input_cost_per_mtok: float | None = Field(default=None, ge=0.0)
    #: Price per million completion tokens (USD); null: from the price table.
    output_cost_per_mtok: float | None = Field(default=None, ge=0.0)
    #: Provider-specific request fields (``reasoning_effort``, OpenRouter ``provider``, …).
    extra_body: dict[str, Any] = Field(default_factory=dict)

    @property
    def priced(self) -> bool:
        """Whether both prices are known (a cost of 0 is then a real 0, not a missing price)."""
        return self.input_cost_per_mtok is not None and self.output_cost_per_mtok is not None

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """The cost of one call; 0 for a model whose price is unknown (see :attr:`priced`)."""
        return (
            prompt_tokens * (self.input_cost_per_mtok or 0.0)
            + completion_tokens * (self.output_cost_per_mtok or 0.0)
        ) / 1e6


class FaultRates(BaseModel):
    """Probability per answer that the offline model injects each fault (sum at most 1)."""

    model_config = _STRICT

    #: A diff the proposer cannot parse.
    malformed: float = Field(default=0.0, ge=0.0, le=1.0)
    #: An edit that changes nothing.
    noop: float = Field(default=0.0, ge=0.0, le=1.0)
    #: A program that raises when it runs.
    runtime_error: float = Field(default=0.0, ge=0.0, le=1.0)
    #: A program that does not compile.
    syntax_error: float = Field(default=0.0, ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _at_most_one(self) -> FaultRates:
        if self.total() > 1.0 + 1e-9:
            raise ValueError(f"fault rates sum to {self.total():.3f}; they must sum to at most 1")
        return self

    def total(self) -> float:
        return self.malformed + self.noop + self.runtime_error + self.syntax_error


class OfflineConfig(BaseModel):
    model_config = _STRICT

    #: Seed of the offline model's answers (with each call's seed).
    seed: int = 0
    #: Probability per answer of each injected fault (for testing a scaffold's error paths).
    faults: FaultRates = Field(default_factory=FaultRates)


class LLMConfig(BaseModel):
    """The ``llm:`` section of a run config."""

    model_config = _STRICT

    #: ``offline`` (the shipped mutation model, no endpoint) or ``openai`` (any
    #: OpenAI-compatible endpoint); naming an endpoint or a model implies ``openai``.
    provider: Literal["offline", "openai"] = "offline"
    #: The endpoint's base URL (usually ending in /v1); --api-base overrides it.
    api_base: str | None = None
    #: The NAME of the environment variable holding the key (never the key itself).
    api_key_env: str = Field(default="OPENAI_API_KEY", min_length=1)
    #: The ensemble: one model drawn per call by weight (items: see llm.models[] below).
    models: list[ModelConfig] = Field(default_factory=list)
    #: Models for guide calls (EvoX variation operators and insight, AdaEvolve paradigms) at
    #: the same endpoint; empty: the run's ``models`` (the reference's ``guide_models``).
    guide_models: list[ModelConfig] = Field(default_factory=list)
    #: Deadline of one request (seconds).
    timeout_s: float = Field(default=600.0, gt=0.0)
    #: Extra attempts on transient failures (timeouts, 429, 5xx, connection errors).
    retries: int = Field(default=3, ge=0)
    #: First backoff; it doubles per retry (capped at 60 s; a Retry-After header wins).
    retry_backoff_s: float = Field(default=2.0, ge=0.0)
    #: Send the per-call ``seed`` (turn off for endpoints that reject the field).
    send_seed: bool = True
    #: Budget: no call starts once the run has used this many tokens (null: no cap).
    max_total_tokens: int | None = Field(default=None, gt=0)
    #: Budget: no call starts once the run has spent this much (null: no cap).
    max_cost: float | None = Field(default=None, gt=0.0)
    #: Settings of the offline model (provider offline only).
    offline: OfflineConfig = Field(default_factory=OfflineConfig)
    #: Set when a run starts: the review date of the price table its models' prices came from
    #: (``harness/llm/prices.yaml``, ``GALAPAGOS_PRICES``).
    price_table: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _no_secrets(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and "api_key" in data:
            raise ValueError(
                "llm.api_key is not allowed: secrets never go in a config file; put the key in "
                "the environment variable named by llm.api_key_env (default OPENAI_API_KEY)"
            )
        return data

    @model_validator(mode="after")
    def _consistent(self) -> LLMConfig:
        if self.models and sum(m.weight for m in self.models) <= 0:
            raise ValueError("llm.models weights sum to 0; give at least one model a weight > 0")
        if self.guide_models and sum(m.weight for m in self.guide_models) <= 0:
            raise ValueError(
                "llm.guide_models weights sum to 0; give at least one model a weight > 0"
            )
        if "provider" in self.model_fields_set and self.provider == "offline" and self.api_base:
            raise ValueError(
                "llm.api_base is set but llm.provider is offline; set provider: openai"
            )
        return self
