"""The API's request and response models (they make the OpenAPI document)."""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

#: How the library's messages name its settings over the API (the request fields; the CLI
#: names them by its flags): passed as ``names`` to the planning functions.
API_NAMES = {
    "max_tokens": "max_total_tokens",
    "max_cost": "max_cost",
    "iterations": "iterations",
    "seed": "seed",
    "set": "override",
    "scaffold": "scaffold",
    "models": "models",
    "api_base": "api_base",
}

__all__ = [
    "BlockOut",
    "CompositionIn",
    "EventOut",
    "EventsOut",
    "LaunchIn",
    "LaunchOut",
    "BenchmarkCellOut",
    "LeaderboardOut",
    "LeaderboardRow",
    "ScaffoldRank",
    "LineageNode",
    "LineageOut",
    "Problem",
    "ProgramOut",
    "ProgramSummary",
    "ResumeIn",
    "RunOut",
    "ScaffoldOut",
    "StatusOut",
    "TaskOut",
    "finite",
]

SEED_MAX = 2**32 - 1


def finite(value: Any) -> Any:
    """``value`` with every NaN/±inf replaced by ``None`` (JSON has no such numbers)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


def _lone_surrogate(data: Any) -> str | None:
    """The first string in ``data`` (keys too) that is not valid Unicode text (a lone
    surrogate such as ``"\\ud800"``, which JSON can spell), else ``None``.  Iterative: any
    nesting depth the JSON parser let through."""
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            try:
                node.encode("utf-8")
            except UnicodeEncodeError:
                return node
        elif isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list | tuple):
            stack.extend(node)
    return None


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _unicode_text(cls, data: Any) -> Any:
        bad = _lone_surrogate(data)
        if bad is not None:
            shown = bad[:20].encode("utf-8", "backslashreplace").decode()
            raise ValueError(
                f"text {shown!r} holds a lone surrogate, which is not Unicode text; send UTF-8"
            )
        return data


class Problem(BaseModel):
    """A problem document (RFC 9457): every 4xx and 5xx body of the API."""

    type: str = Field("about:blank", description="Always about:blank (the status says it).")
    title: str = Field(description="The status's phrase.")
    status: int
    detail: str = Field(description="What is wrong and what to do, in one line.")
    errors: list[dict[str, Any]] | None = Field(
        None, description="For 422: each invalid field (loc, msg, type)."
    )


class CompositionIn(_In):
    name: str | None = Field(None, max_length=48, description="Name of the composition.")
    blocks: dict[str, str] = Field(
        description="One named block per slot (see /api/v1/blocks)", max_length=6
    )
    loop: dict[str, bool] = Field(default_factory=dict, max_length=8)


class LaunchIn(_In):
    task: str = Field(max_length=128, description="A task name (see /api/v1/tasks).")
    scaffold: str | None = Field(None, max_length=64, description="A scaffold name.")
    composition: CompositionIn | None = None
    iterations: int | None = Field(None, ge=0, le=100_000)
    seed: int | None = Field(None, ge=0, le=SEED_MAX)
    overrides: list[str] = Field(
        default_factory=list, max_length=50, description="section.key=value items (--set)."
    )


class ResumeIn(_In):
    iterations: int | None = Field(None, ge=1, le=100_000)
    max_total_tokens: int | None = Field(None, ge=1)
    max_cost: float | None = Field(None, gt=0, allow_inf_nan=False)


class FailureReason(BaseModel):
    outcome: str
    iterations: int
    example: str


class RunLLMOut(BaseModel):
    """What produced a run (``harness.provenance.run_llm``); the endpoint's credentials are
    redacted."""

    provider: str = Field(description="offline, or read from the endpoint's host.")
    models: list[str]
    endpoint: str | None
    host: str | None
    prices: dict[str, dict[str, float] | None] = Field(
        description="USD per million input/output tokens; null: unknown (its calls cost 0)."
    )
    price_table: str | None
    price_unknown: list[str]
    label: str


class RunOut(BaseModel):
    run_id: str
    scaffold: str
    task: str
    status: str
    iterations_done: int
    max_iterations: int
    seed: int
    seed_score: float | None
    best_score: float | None
    best_program_id: str | None
    prompt_tokens: int
    completion_tokens: int
    tokens: int
    cost: float
    cost_known: bool = Field(description="False when a model's price is unknown.")
    llm: RunLLMOut
    created_at: float | None
    updated_at: float | None
    error: str
    iterations_failed: int
    iterations_not_done: int = Field(
        description="Of the failed iterations, those that got no proposal: resume reruns them."
    )
    failure_reasons: list[FailureReason]
    seed_error: str | None


class LaunchOut(BaseModel):
    run: RunOut
    notes: list[str]


class CancelOut(BaseModel):
    run_id: str
    outcome: str = Field(description="stopping (after its iteration in flight) or cancelled")


class ProgramSummary(BaseModel):
    id: str
    iteration: int
    parent_id: str | None
    score: float | None
    generation: int
    metrics: dict[str, Any]


class EvaluationOut(BaseModel):
    iteration: int
    attempt: int
    status: str
    duration_s: float | None
    result: dict[str, Any]


class LLMCallOut(BaseModel):
    iteration: int
    attempt: int | None
    purpose: str | None
    model: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float | None
    cost: float | None
    ok: bool
    error: str | None


class ProgramOut(ProgramSummary):
    code: str
    language: str
    changes: str
    parent_label: str
    inspiration_ids: list[str]
    metadata: dict[str, Any]
    artifacts: dict[str, Any]
    evaluations: list[EvaluationOut]
    diff: str = Field(description="Unified diff from the parent's code ('' without a parent).")
    children: list[str]
    llm_calls: list[LLMCallOut]


class LineageNode(BaseModel):
    id: str
    parent_id: str | None
    iteration: int
    score: float | None
    generation: int
    best: bool


class LineageOut(BaseModel):
    run_id: str
    nodes: list[LineageNode]
    best_so_far: list[tuple[int, float | None]]


class EventOut(BaseModel):
    seq: int
    iteration: int | None
    kind: str
    payload: dict[str, Any]
    created_at: float | None


class EventsOut(BaseModel):
    run_id: str
    events: list[EventOut]
    last_seq: int = Field(description="Pass as ?after= to read on from here.")


class BlockOut(BaseModel):
    slot: str
    name: str
    summary: str
    provides: list[str]
    requires: dict[str, list[str]]
    config: dict[str, Any]
    source: str


class ScaffoldFile(BaseModel):
    path: str
    lines: int
    bytes: int
    sha256: str


class ScaffoldOut(BaseModel):
    name: str
    summary: str
    composition: dict[str, str]
    loop: dict[str, Any]
    blocks: list[BlockOut]
    defaults: dict[str, Any]
    card: str = Field(description="The scaffold card (README.md, markdown).")
    files: list[ScaffoldFile]
    tags: list[str]


class TaskOut(BaseModel):
    name: str
    objective: str | None
    direction: str | None
    description: str
    best_known: float | None
    best_known_source: str | None
    best_stored_score: float | None
    best_stored_run: str | None
    limits: dict[str, Any]


class LeaderboardRow(BaseModel):
    """One scaffold × task of a benchmark (see ``harness.benchmark.leaderboard``)."""

    scaffold: str
    task: str
    seeds: int = Field(description="Runs with a score (failed runs have none).")
    complete: int = Field(description="Of those, completed.")
    best: float | None
    mean: float | None
    std: float | None = Field(description="Sample standard deviation over seeds.")
    ci_low: float | None = Field(description="95% bootstrap CI of the mean over seeds, low.")
    ci_high: float | None = Field(description="95% bootstrap CI of the mean over seeds, high.")
    raw_metric: str | None = Field(description="The task card's raw metric.")
    direction: str = Field(description="The raw metric's direction (maximize or minimize).")
    best_raw: float | None = Field(description="Best raw value over seeds (in its direction).")
    mean_raw: float | None
    best_known: float | None = Field(description="The task card's best known, score scale.")
    gap: float | None = Field(description="(best_known - mean) / |best_known|.")
    iterations_to_99: float | None = Field(
        description="Mean first iteration within 1 % of the run's final best."
    )
    evaluations: int
    failed_iterations: int
    failed_runs: int
    tokens: int
    cost: float
    rank: int | None = Field(
        description="Within the task: 1 + the scaffolds whose CI lies wholly above (ties)."
    )


class ScaffoldRank(BaseModel):
    scaffold: str
    mean_rank: float | None
    tasks_ranked: int


class BenchmarkCellOut(BaseModel):
    scaffold: str
    task: str
    seed: int
    run_id: str | None
    status: str
    error: str
    iterations_done: int
    max_iterations: int | None
    seed_score: float | None
    best_score: float | None
    evaluations: int
    failed_iterations: int
    iterations_to_99: int | None
    tokens: int
    cost: float
    task_hash: str = Field(description="The content hash of the task files the run used.")


class LeaderboardOut(BaseModel):
    benchmark: str | None = Field(description="None: the store holds no benchmark yet.")
    source: str = Field(description="Where the rows come from.")
    provenance: dict[str, Any] | None = Field(
        None, description="What produced the numbers (model, seeds, versions); 'line': caption."
    )
    rows: list[LeaderboardRow]
    scaffolds: list[ScaffoldRank]
    cells: list[BenchmarkCellOut]


class BenchmarkOut(BaseModel):
    name: str
    created_at: float
    scaffolds: list[str]
    tasks: list[str]
    seeds: int
    iterations: int
    cells: int
    runs: int = Field(description="Cells with a run.")
    completed: int


class StatusOut(BaseModel):
    version: str
    public_read: bool
    authenticated: bool
    tokens_exist: bool
    workers: int
    running: list[str]
    queued: int
