"""What the listings show of a stored run (status, failures), without the run machinery.

``galapagos runs`` and ``show``, the hub's pages and the leaderboard describe runs from the
store alone; keeping these functions apart from :mod:`harness.runs` (which imports the
controller, the scaffolds' configuration and the LLM layer) lets a listing start at once.
:mod:`harness.runs` re-exports them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from harness.provenance import run_llm
from harness.store.owner import run_alive

if TYPE_CHECKING:
    from harness.core.store import RunRecord
    from harness.store.protocols import RunReader

__all__ = ["describe_run", "failure_summary", "run_status"]


def run_status(run: RunRecord) -> str:
    """The stored status, with a "running" run whose owner is gone (its process ended on this
    host, or its heartbeat stopped on another) shown as "interrupted"."""
    if run.status == "running" and not run_alive(run):
        return "interrupted"
    return run.status


def _cause(payload: Mapping[str, Any]) -> tuple[str, str]:
    """(outcome, its last error line) of one attempt event: an exception's message, not a
    traceback's heading."""
    outcome = str(payload.get("outcome", "?"))
    status = payload.get("status")
    if status and status not in ("ok", "invalid"):
        outcome += f" ({status})"
    lines = [line.strip() for line in str(payload.get("error") or "").splitlines()]
    lines = [line for line in lines if line]
    return outcome, lines[-1] if lines else ""


def failure_summary(store: RunReader, run_id: str) -> dict[str, Any]:
    """How many iterations produced no child, why (their last attempt, most common first), how
    many of them got no proposal at all (not done: a resume runs them again), and whether the
    seed program itself failed to evaluate.  An iteration run again counts by its last
    outcome."""
    seed_error, outcome = _outcomes(store, run_id)
    failed = sorted(i for i, what in outcome.items() if what != "ok")
    causes: list[tuple[str, str]] = []
    if failed:  # attempts are read only for runs that have failures to explain
        last = {e.iteration: _cause(e.payload) for e in store.events(run_id, ["attempt"])}
        causes = [last.get(i, ("unknown", "")) for i in failed]
    reasons = Counter(outcome for outcome, _ in causes)
    example = dict(causes)  # the latest error of each outcome
    return {
        "iterations_failed": len(failed),
        "iterations_not_done": sum(1 for i in failed if outcome[i] == "not_done"),
        "failure_reasons": [
            {"outcome": outcome, "iterations": count, "example": example[outcome][:300]}
            for outcome, count in reasons.most_common(3)
        ],
        "seed_error": seed_error,
    }


def _outcomes(store: RunReader, run_id: str) -> tuple[str | None, dict[int, str]]:
    """The seed's error (None: it evaluated) and each iteration's last outcome: ``ok``,
    ``failed`` or ``not_done`` (no proposal, and no iteration after it was done)."""
    seed_error = None
    outcome: dict[int, str] = {}
    kinds = ["seed", "iteration_failed", "iteration_not_done", "admit"]
    for event in store.events(run_id, kinds):
        if event.kind == "seed":
            if event.payload.get("failed"):
                seed_error = str(
                    event.payload.get("error") or event.payload.get("status") or "failed"
                )
        elif event.kind == "admit":
            if event.iteration:
                outcome[event.iteration] = "ok"
        elif event.kind == "iteration_failed":
            outcome[event.iteration] = "failed"
        else:
            outcome[event.iteration] = "not_done"
    # Only the trailing iterations without a proposal stay not done (as the controller rules):
    # one followed by a done iteration is a plain failure.
    last_done = max((i for i, what in outcome.items() if what != "not_done"), default=0)
    return seed_error, {
        i: "failed" if w == "not_done" and i < last_done else w for i, w in outcome.items()
    }


def describe_run(store: RunReader, run: RunRecord) -> dict[str, Any]:
    """The fields scripts and CI read (``--json`` of run/runs/show); ``llm`` names the model,
    provider and endpoint (redacted) that produced the run (:func:`harness.provenance.run_llm`);
    ``cost_known`` is false when a model's price was unknown (its calls cost 0 here)."""
    llm = run_llm(run.config)
    return {
        "run_id": run.id,
        "scaffold": run.scaffold,
        "task": run.task,
        "status": run_status(run),
        "iterations_done": run.iterations_done,
        "max_iterations": run.max_iterations,
        "seed": run.seed,
        "seed_score": run.seed_score,
        "best_score": run.best_score,
        "best_program_id": run.best_program_id,
        "prompt_tokens": run.prompt_tokens,
        "completion_tokens": run.completion_tokens,
        "tokens": run.tokens,
        "cost": run.cost,
        "cost_known": not llm["price_unknown"],
        "llm": llm,
        "created_at": run.created_at,
        "updated_at": run.updated_at,
        "error": run.error,
        "stop_reason": run.stop_reason,
        **failure_summary(store, run.id),
    }
