"""Frozen records that flow between the six components and the controller.

Components receive these and return decisions; only the controller creates programs and writes
them to the store.  Mappings inside records are plain dicts by convention treated as read-only
(a component that wants per-program state keeps its own map keyed by program id).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "Attempt",
    "EvalResult",
    "EvalStatus",
    "Event",
    "IterationOutcome",
    "LLMCall",
    "Program",
    "Prompt",
    "Proposal",
    "Selection",
    "TaskInfo",
]

#: Why an evaluation ended the way it did.  ``ok`` means the evaluator ran to completion and
#: returned metrics (which may still describe an invalid solution); every other value is a
#: failure the sandbox or the evaluator detected.
EvalStatus = Literal[
    "ok",
    "invalid",  # the evaluator judged the candidate's output invalid (shape, NaN, overlap, …)
    "invalid_result",  # the evaluation produced no well-formed result (schema, size, NaN score)
    "timeout",
    "oom",
    "output_limit",
    "crash",  # the candidate (or the evaluator in compat mode) raised or exited non-zero
    "error",  # infrastructure trouble reported as data (e.g. sandbox refused the job)
]


@dataclass(frozen=True)
class Program:
    """One scored program in a run.

    ``score`` is fixed when the program is created (see :func:`harness.core.scoring.get_score`),
    so components never recompute it differently.
    """

    id: str
    code: str
    iteration: int
    metrics: Mapping[str, Any]
    score: float
    parent_id: str | None = None
    inspiration_ids: tuple[str, ...] = ()
    parent_label: str = ""
    generation: int = 0
    language: str = "python"
    changes: str = ""
    artifacts: Mapping[str, str] = field(default_factory=dict)
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["inspiration_ids"] = list(self.inspiration_ids)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Program:
        kw = dict(d)
        kw["inspiration_ids"] = tuple(kw.get("inspiration_ids") or ())
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in kw.items() if k in names})


@dataclass(frozen=True)
class EvalResult:
    """What an evaluation produced.  A candidate's failure is data here, not an exception."""

    status: EvalStatus
    metrics: Mapping[str, Any] = field(default_factory=dict)
    artifacts: Mapping[str, str] = field(default_factory=dict)
    duration_s: float = 0.0
    exit_code: int | None = None
    timed_out: bool = False
    oom_killed: bool = False
    output_truncated: bool = False
    stderr_tail: str = ""
    #: The cascade stage that stopped the evaluation (``None`` when every stage ran).
    failed_stage: str | None = None
    #: Per-stage summaries: ``{"stage": name, "status": …, "duration_s": …, "passed": bool}``.
    stages: tuple[Mapping[str, Any], ...] = ()
    #: Infrastructure faults this evaluation was retried after (engine restarts, containers
    #: killed from outside): they are never its result, only recorded.
    infra_retries: tuple[str, ...] = ()

    @property
    def error(self) -> str:
        """Best human-readable reason, for feedback to the LLM."""
        for key in ("error", "failure_reason", "traceback"):
            if self.artifacts.get(key):
                return str(self.artifacts[key])
        err = self.metrics.get("error")
        if isinstance(err, str) and err:
            return err
        return "" if self.status == "ok" else self.status

    def to_dict(self) -> dict[str, Any]:
        """Every field, as JSON values (what ``dataclasses.asdict`` gives, without its generic
        deep copy: stored with every evaluation)."""
        d = {name: getattr(self, name) for name in _EVAL_FIELDS}
        d["metrics"] = dict(self.metrics)
        d["artifacts"] = dict(self.artifacts)
        d["stages"] = [dict(s) for s in self.stages]
        d["infra_retries"] = list(self.infra_retries)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> EvalResult:
        kw = dict(d)
        kw["stages"] = tuple(kw.get("stages") or ())
        kw["infra_retries"] = tuple(kw.get("infra_retries") or ())
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in kw.items() if k in names})


_EVAL_FIELDS = tuple(f.name for f in dataclasses.fields(EvalResult))


@dataclass(frozen=True)
class Selection:
    """A selection policy's decision for one attempt.

    ``parent`` is ``None`` only for a from-scratch iteration (empty population).
    ``inspirations`` are ordered; ``inspiration_labels`` (same length, or empty) name the prompt
    section each belongs to ("" = plain context).  ``parent_label`` is text injected under the
    current program (EvoX/AdaEvolve variation-operator labels).  ``info`` is recorded verbatim in
    the ``select`` event (mode, island, reason, …).

    ``tags`` travel with the child to admission: the controller copies them into the child's
    ``metadata`` (e.g. ``{"island": 2, "mode": "explore"}``), so a population can route the child
    to the island it was sampled from even when other iterations ran in between.  Values must be
    JSON-serialisable.
    """

    parent: Program | None
    inspirations: tuple[Program, ...] = ()
    parent_label: str = ""
    inspiration_labels: tuple[str, ...] = ()
    info: Mapping[str, Any] = field(default_factory=dict)
    tags: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Prompt:
    """Chat messages for one LLM call plus the response shape the proposer expects."""

    system: str
    user: str
    #: ``diff`` (SEARCH/REPLACE expected), ``rewrite`` (full program expected) or a
    #: scaffold-specific kind (``strategy``, ``paradigm``) for meta prompts.
    kind: str = "diff"

    def messages(self) -> list[dict[str, str]]:
        out = []
        if self.system:
            out.append({"role": "system", "content": self.system})
        out.append({"role": "user", "content": self.user})
        return out


@dataclass(frozen=True)
class LLMCall:
    """Accounting for one completed LLM call (successful or not)."""

    model: str
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cost: float = 0.0
    ok: bool = True
    error: str = ""
    purpose: str = "propose"


@dataclass(frozen=True)
class Proposal:
    """A proposer's answer: a child program, or the diagnostic of why there is none."""

    code: str | None
    response: str = ""
    error: str = ""
    changes: str = ""
    mode: str = "diff"
    llm: LLMCall | None = None

    @property
    def ok(self) -> bool:
        return self.code is not None


@dataclass(frozen=True)
class Attempt:
    """One failed attempt within an iteration, fed back into the next attempt's prompt."""

    index: int
    stage: Literal["propose", "evaluate", "llm"]
    error: str
    code: str | None = None
    response: str = ""
    traceback: str = ""
    metrics: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class IterationOutcome:
    """Everything that happened in one iteration, passed to ``observe`` hooks."""

    iteration: int
    selection: Selection | None
    child: Program | None
    attempts: tuple[Attempt, ...] = ()
    result: EvalResult | None = None
    admitted: bool = False
    attempts_used: int = 0

    @property
    def succeeded(self) -> bool:
        return self.child is not None


@dataclass(frozen=True)
class Event:
    """One recorded decision (select, attempt, admit, fallback, …) for inspection and replay."""

    iteration: int
    kind: str
    payload: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TaskInfo:
    """What blocks may know of the task: shown to the model, never its hidden data."""

    name: str = ""
    description: str = ""
    language: str = "python"
    #: Evaluation wall limit per stage, for the prompt's timeout warning.
    eval_timeout_s: float | None = None
    #: What guide/meta models may see: the description and the evaluator's visible parts, as
    #: the task card allows (never hidden data); "" = the description only.
    model_context: str = ""
