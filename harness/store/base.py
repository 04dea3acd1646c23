"""The run store's records and protocol (defined in :mod:`harness.core.store`, re-exported)."""

from __future__ import annotations

from harness.core.store import (
    RUN_STATUSES,
    EvaluationRow,
    IterationCommit,
    LLMCallRow,
    RunRecord,
    RunStore,
)

__all__ = [
    "RUN_STATUSES",
    "EvaluationRow",
    "IterationCommit",
    "LLMCallRow",
    "RunRecord",
    "RunStore",
]
