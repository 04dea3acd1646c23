"""The ``task`` evaluator block: the task's own evaluator, sandboxed by the run."""

from __future__ import annotations

from harness.core.blocks import block
from harness.core.config import EvaluatorConfig
from harness.core.evaluator import BaseEvaluator

__all__ = ["task_evaluator"]


@block(
    "task",
    "The task's own evaluator, every candidate and cascade stage in a fresh locked-down "
    "container (configured by the run's evaluator section).",
)
def task_evaluator(config: EvaluatorConfig, *, task_evaluator: BaseEvaluator) -> BaseEvaluator:
    """The evaluator the run made from ``config`` (its sandbox, limits and pool)."""
    return task_evaluator
