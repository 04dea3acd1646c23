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
from collections.abc import Mapping
from typing import Any

from harness.core.block import Block
from harness.core.llm import LLM
from harness.core.records import Program, Prompt, Proposal

__all__ = ["BaseProposer", "LLM"]


class BaseProposer(Block, ABC):
    #: What the proposer expects the model to answer: ``diff`` (SEARCH/REPLACE edits) or
    #: ``rewrite`` (a whole program).  A prompt builder built after it asks for that shape.
    response_kind: str = "diff"

    @abstractmethod
    async def propose(self, prompt: Prompt, parent: Program | None, llm: LLM) -> Proposal:
        """Ask the model once and turn its answer into a child program."""

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:  # noqa: B027 - optional
        """Stateless by contract; present so every block round-trips the same way."""
