"""Memory: cross-candidate knowledge that outlives single iterations (paradigms, strategies).

Contract:

- ``render(selection, iteration)`` returns text the prompt builder inserts as is ("" = none).
- ``observe(outcome)`` is called once per iteration after the selection policy observed it.
- Work that needs the LLM (a guide model asked for paradigms, a meta model rewriting a
  strategy) happens in the block hooks, through ``step.llm`` (see :mod:`harness.core.block`).
- State (and any RNG) round-trips through ``state_dict``/``load_state_dict``.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Mapping
from typing import Any

from harness.core.block import Block
from harness.core.records import IterationOutcome, Selection

__all__ = ["BaseMemory"]


class BaseMemory(Block, ABC):  # noqa: B024 - every method is an optional hook
    def render(self, selection: Selection, iteration: int) -> str:
        return ""

    def observe(self, outcome: IterationOutcome) -> None:  # noqa: B027
        pass

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:  # noqa: B027
        pass
