"""The run store's records and protocol: what the controller writes and the CLI/service read.

They live in ``core`` because the controller builds them and writes them through
:class:`RunStore`; :mod:`harness.store` implements it (SQLite) and gives readers their own
protocols (:mod:`harness.store.protocols`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from harness.core.records import EvalResult, Event, LLMCall, Program

__all__ = [
    "RUN_STATUSES",
    "STOP_REASONS",
    "EvaluationRow",
    "IterationCommit",
    "LLMCallRow",
    "LastChanged",
    "RunRecord",
    "RunStore",
]


class LastChanged(list[Any]):
    """A list of a checkpoint's state that says it equals ``base``, a list handed out before
    (never changed), in all but its last item: the store's delta then takes the last item alone
    instead of comparing the rest (an RNG's 625 words whose position moved).  Only its maker
    sets ``base``, and drops the ``base`` of the list it replaces, so that no chain of earlier
    lists is kept alive."""

    __slots__ = ("base",)

    def __init__(self, items: Any = (), base: list[Any] | None = None) -> None:
        super().__init__(items)
        self.base = base

    @classmethod
    def after(cls, before: list[Any], last: Any) -> LastChanged:
        """``before`` with its last item replaced by ``last``."""
        out = cls(before, before)
        out[-1] = last
        if type(before) is cls:
            before.base = None
        return out


RUN_STATUSES = ("running", "completed", "interrupted", "failed", "budget_exhausted")
#: Why a run stopped (``RunRecord.stop_reason``, ``RunSummary.stop_reason``): all iterations
#: done; a stop was asked for (Ctrl-C, the hub's cancel, a benchmark's halt); the token/cost
#: budget ran out; the seed program could not be evaluated; the same infrastructure cause
#: failed too many iterations in a row; the evaluator failed the same way on too many
#: candidates in a row; iterations got no proposal (an endpoint outage: they are not done); the
#: Docker engine stayed away past its wait; the task running it was cancelled; an unexpected
#: error; another owner took the run over.
STOP_REASONS = (
    "completed",
    "stopped",
    "budget",
    "seed_failed",
    "infra_streak",
    "evaluator_broken",
    "no_proposal",
    "engine_unavailable",
    "cancelled",
    "error",
    "owner_lost",
)


@dataclass(frozen=True)
class RunRecord:
    """A stored run: what it searches with what, its status, and its running totals (best
    score, tokens, cost), updated by every iteration's commit."""

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
    #: Why the run stopped, as data (see :data:`STOP_REASONS`; ``""`` while it runs).
    stop_reason: str = ""
    #: When the owner last said it is alive (wall clock, seconds); see ``harness.store.owner``.
    heartbeat_at: float | None = None

    @property
    def tokens(self) -> int:
        """Prompt and completion tokens together."""
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class EvaluationRow:
    """One evaluation of a program (``attempt`` within its iteration), with the code run."""

    iteration: int
    attempt: int
    program_id: str
    result: EvalResult
    code: str = ""


@dataclass(frozen=True)
class LLMCallRow:
    """One LLM call of an attempt, with the prompt it was sent."""

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
    """The controller's writer: it creates and updates a run, commits each iteration in one
    transaction, and reads the run back to resume it.

    Only the controller (and :func:`harness.runs.execute`, which starts it) writes through
    this seam; blocks never see a store.  Readers use :class:`harness.store.RunReader`.
    Implementations: :class:`harness.store.SQLiteStore`; on a Ray node, a proxy that sends
    each call to the head's store (``harness.distributed.store.RemoteStore``)."""

    def create_run(self, run: RunRecord) -> None:
        """Store a new run (its id must be new)."""
        ...

    def get_run(self, run_id: str) -> RunRecord: ...

    def update_run(self, run_id: str, **fields: Any) -> None:
        """Set run fields (names of :class:`RunRecord`, not ``id``)."""
        ...

    def commit_iteration(self, commit: IterationCommit) -> None:
        """Everything one iteration produced, atomically (a crash loses at most the
        iteration in flight)."""
        ...

    def programs(self, run_id: str) -> list[Program]:
        """Every program of the run, in the order they were admitted."""
        ...

    def checkpoint(self, run_id: str) -> tuple[int, Mapping[str, Any]] | None:
        """The latest checkpoint: (iteration, state), or None before the first commit."""
        ...

    def done_iterations(self, run_id: str) -> set[int]:
        """The iterations committed (a resume skips them)."""
        ...

    def events(self, run_id: str, kinds: Sequence[str] | None = None) -> list[Event]:
        """The run's events in order (all, or those of ``kinds``)."""
        ...
