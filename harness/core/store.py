"""The run store's records and protocol: what the controller writes and the CLI/service read.

They live in ``core`` because the controller builds them; :mod:`harness.store` implements the
protocol (SQLite) and re-exports the records.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from harness.core.records import EvalResult, Event, LLMCall, Program

__all__ = [
    "RUN_STATUSES",
    "EvaluationRow",
    "IterationCommit",
    "LLMCallRow",
    "RunRecord",
    "RunStore",
]

RUN_STATUSES = ("running", "completed", "interrupted", "failed", "budget_exhausted")


@dataclass(frozen=True)
class RunRecord:
    id: str
    scaffold: str
    task: str
    task_path: str
    config: Mapping[str, Any]
    seed: int
    max_iterations: int
    status: str = "running"
    created_at: float = 0.0
    updated_at: float = 0.0
    iterations_done: int = 0
    best_program_id: str | None = None
    seed_score: float | None = None
    best_score: float | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    error: str = ""
    owner: str = ""
    task_hash: str = ""

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class EvaluationRow:
    iteration: int
    attempt: int
    program_id: str
    result: EvalResult
    code: str = ""


@dataclass(frozen=True)
class LLMCallRow:
    iteration: int
    attempt: int
    call: LLMCall
    prompt: str = ""


@dataclass
class IterationCommit:
    """Everything one iteration produced; written in one transaction."""

    run_id: str
    iteration: int
    status: str  # "ok" (a child was produced) or "failed"
    programs: list[Program] = field(default_factory=list)
    evaluations: list[EvaluationRow] = field(default_factory=list)
    llm_calls: list[LLMCallRow] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    #: Scaffold state after this iteration (components, RNGs, meters).
    checkpoint: Mapping[str, Any] | None = None
    #: Run fields to update (best_score, iterations_done, tokens, …).
    run_updates: dict[str, Any] = field(default_factory=dict)
    best_score: float | None = None
    duration_s: float = 0.0


class RunStore(Protocol):
    def create_run(self, run: RunRecord) -> None: ...

    def get_run(self, run_id: str) -> RunRecord: ...

    def list_runs(self, limit: int | None = None) -> list[RunRecord]: ...

    def update_run(self, run_id: str, **fields: Any) -> None: ...

    def commit_iteration(self, commit: IterationCommit) -> None: ...

    def programs(self, run_id: str) -> list[Program]: ...

    def checkpoint(self, run_id: str) -> tuple[int, Mapping[str, Any]] | None: ...

    def done_iterations(self, run_id: str) -> set[int]: ...

    def events(self, run_id: str, kinds: Sequence[str] | None = None) -> list[Event]: ...

    def score_history(self, run_id: str) -> list[tuple[int, float | None]]: ...

    def llm_usage(self, run_id: str) -> dict[str, Any]: ...

    def close(self) -> None: ...
