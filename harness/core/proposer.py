"""Proposer: one LLM call turned into a child program (or a diagnostic).

Contract:

- ``propose(prompt, parent, llm)`` makes at most one call through ``llm`` (the controller's
  accounted, seeded handle) and returns a :class:`Proposal`.
- A response that cannot become a program (no diff block, unmatched or no-op edit, syntax
  error, too long) is *data*: ``Proposal(code=None, error=…)`` with a diagnostic that will be
  shown to the model in the next attempt.  Only an LLM infrastructure failure raises
  (:class:`~harness.core.errors.LLMError`).
- Proposers keep no state between calls.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Protocol

from harness.core.records import LLMCall, Program, Prompt, Proposal

__all__ = ["BaseProposer", "LLM"]


class LLM(Protocol):
    """The controller's handle to the model: seeded, retried, budgeted and recorded."""

    async def generate(self, prompt: Prompt, *, purpose: str = "propose") -> LLMCall:
        """Return the completed call; raise ``LLMError`` after retries are exhausted."""
        ...


class BaseProposer(ABC):
    @abstractmethod
    async def propose(self, prompt: Prompt, parent: Program | None, llm: LLM) -> Proposal:
        """Ask the model once and turn its answer into a child program."""
