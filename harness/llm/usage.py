"""Token and cost accounting with budget caps that stop a run *before* the next call."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from harness.core.errors import BudgetExhausted
from harness.core.records import LLMCall

__all__ = ["UsageMeter", "estimate_tokens"]


def estimate_tokens(text: str) -> int:
    """Rough token count (4 characters a token) for endpoints that report no usage."""
    return math.ceil(len(text) / 4)


@dataclass
class UsageMeter:
    """Running totals of a run's LLM usage, checked against optional caps.

    ``check()`` is called before every call and raises :class:`BudgetExhausted` once a cap is
    reached.  A call's tokens are known only when it returns, so a call that starts under the
    cap may end over it; the overshoot is at most the calls in flight (one, in a sequential
    run).  Totals round-trip through ``state_dict`` so a resumed run keeps its budget.
    """

    max_total_tokens: int | None = None
    max_cost: float | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    calls: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def exhausted(self) -> str:
        """Why the budget is spent, or "" while calls may still be made."""
        if self.max_total_tokens is not None and self.total_tokens >= self.max_total_tokens:
            return (
                f"LLM token budget spent: {self.total_tokens} of llm.max_total_tokens="
                f"{self.max_total_tokens} tokens used over {self.calls} calls; continue with "
                f"`galapagos resume RUN_ID --max-tokens N` (N above {self.total_tokens}; the "
                "totals carry over)"
            )
        if self.max_cost is not None and self.cost >= self.max_cost:
            return (
                f"LLM cost budget spent: {self.cost:.4f} of llm.max_cost={self.max_cost:g} used "
                f"over {self.calls} calls; continue with `galapagos resume RUN_ID --max-cost X` "
                f"(X above {self.cost:.4f}; the totals carry over)"
            )
        return ""

    def check(self) -> None:
        if reason := self.exhausted():
            raise BudgetExhausted(reason)

    def record(self, call: LLMCall) -> None:
        self.prompt_tokens += call.prompt_tokens
        self.completion_tokens += call.completion_tokens
        self.cost += call.cost
        self.calls += 1

    def state_dict(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost": self.cost,
            "calls": self.calls,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore totals; the caps stay as configured (``resume --max-tokens/--max-cost``
        may have changed them)."""
        self.prompt_tokens = int(state["prompt_tokens"])
        self.completion_tokens = int(state["completion_tokens"])
        self.cost = float(state["cost"])
        self.calls = int(state["calls"])
