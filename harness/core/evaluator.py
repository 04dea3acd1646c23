"""Evaluator: scores a program's source, in a sandbox.

Contract:

- ``evaluate(code, program_id=…, iteration=…)`` returns an :class:`EvalResult`; a crashing,
  hanging, oversized or forged candidate is reported in ``status`` and never raises.
- Only broken infrastructure raises (:class:`~harness.core.errors.SandboxError`).
- Evaluators may be called concurrently (``max_parallel_iterations``) and must be
  deterministic for a deterministic task: the same code gives the same metrics.
- ``aclose`` releases containers, pools and processes; whoever created the evaluator calls it
  (the run's services, :func:`harness.runs.open_services`), not the scaffold.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from harness.core.records import EvalResult

__all__ = ["BaseEvaluator"]


class BaseEvaluator(ABC):
    @abstractmethod
    async def evaluate(self, code: str, *, program_id: str, iteration: int) -> EvalResult:
        """Score ``code``."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release resources."""
