"""LLM access: config, an OpenAI-compatible ensemble client, usage budgets, the offline model.

    settings = resolve_llm_config(LLMConfig.model_validate(yaml["llm"]), api_base=…, models=…)
    async with await open_llm(settings, rng=make_rng(seed, "llm")) as client:
        await client.check_endpoint()          # one-line LLMUnavailable before the run starts
        call = await client.generate(prompt, seed=per_call_seed)

Names are imported on first use, so ``harness.llm.config`` (read by every config load) does
not pull in the HTTP client or the offline server's web stack.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.llm.client import EndpointInfo, LLMClient, SeededLLM, choose_model, open_llm
    from harness.llm.config import (
        FaultRates,
        LLMConfig,
        ModelConfig,
        OfflineConfig,
        ResolvedLLM,
        resolve_llm_config,
    )
    from harness.llm.offline import OfflineServer, start_offline_server
    from harness.llm.usage import UsageMeter, estimate_tokens

_WHERE = {
    "EndpointInfo": "client",
    "LLMClient": "client",
    "SeededLLM": "client",
    "choose_model": "client",
    "open_llm": "client",
    "FaultRates": "config",
    "LLMConfig": "config",
    "ModelConfig": "config",
    "OfflineConfig": "config",
    "ResolvedLLM": "config",
    "resolve_llm_config": "config",
    "OfflineServer": "offline",
    "start_offline_server": "offline",
    "UsageMeter": "usage",
    "estimate_tokens": "usage",
}

__all__ = [
    "EndpointInfo",
    "FaultRates",
    "LLMClient",
    "LLMConfig",
    "ModelConfig",
    "OfflineConfig",
    "OfflineServer",
    "ResolvedLLM",
    "SeededLLM",
    "UsageMeter",
    "choose_model",
    "estimate_tokens",
    "open_llm",
    "resolve_llm_config",
    "start_offline_server",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'harness.llm' has no attribute {name!r}")
    return getattr(importlib.import_module(f"harness.llm.{module}"), name)
