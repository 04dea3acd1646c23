"""The model seams: the chat model the controller drives, and the handle blocks call.

``ChatModel`` is what :mod:`harness.llm` implements (an OpenAI-compatible client or ensemble);
``LLM`` is the controller's wrapper given to proposers and block hooks: it draws each call's
seed from the run's RNG and records every call (failed ones too) with the iteration.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from harness.core.records import LLMCall, Prompt

__all__ = ["LLM", "ChatModel"]


class ChatModel(Protocol):
    """An OpenAI-compatible chat model (or ensemble) that returns accounted calls."""

    async def generate(self, prompt: Prompt, *, purpose: str, seed: int) -> LLMCall:
        """One completion; raises ``LLMError`` once its retries are exhausted, or
        ``BudgetExhausted`` when the run's budget is spent."""
        ...

    def state_dict(self) -> dict[str, Any]:
        """Ensemble choice state, checkpointed with the run."""
        ...

    def load_state_dict(self, state: Mapping[str, Any]) -> None: ...


class LLM(Protocol):
    """The controller's handle to the model: seeded, retried, budgeted and recorded."""

    async def generate(self, prompt: Prompt, *, purpose: str = "propose") -> LLMCall:
        """Return the completed call; raise ``LLMError`` after retries are exhausted."""
        ...
