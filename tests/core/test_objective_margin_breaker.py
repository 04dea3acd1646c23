"""What a run optimises and when it stops: the card's objective, a margin over float noise for a
new best, and the breaker for an evaluator that is itself broken."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from harness.core.config import GeneralConfig
from harness.core.controller import Progress, evaluator_fault
from harness.core.errors import LLMError
from harness.core.records import EvalResult, LLMCall, Prompt
from harness.core.scoring import Objective, improves
from harness.store.sqlite import SQLiteStore
from tests.core.test_controller import make
from tests.fakes import EchoModel, ScoreEvaluator, ScoreProposer


def test_a_new_best_must_beat_the_best_by_more_than_float_noise(tmp_path: Path) -> None:
    # Each child is its parent's score plus two ulps: a different float, the same result.
    ctl, store, _ = make(tmp_path, iterations=4)
    ctl.scaffold.proposer = ScoreProposer(step=2.3e-16)
    summary = asyncio.run(ctl.run_to_end())
    assert summary.best_program_id == "p0"
    scores = [p.score for p in store.programs("r1")]
    assert len(set(scores)) > 1  # the children do differ, in their last digits
    assert [e.payload["new_best"] for e in store.events("r1", ["admit"])] == [True] + [False] * 4
    assert [s for _, s in store.score_history("r1")] == [0.5] * 5


def test_a_real_improvement_still_counts(tmp_path: Path) -> None:
    ctl, _, _ = make(tmp_path, iterations=2)
    ctl.scaffold.proposer = ScoreProposer(step=1e-9)
    assert asyncio.run(ctl.run_to_end()).best_program_id == "p2"


def test_the_margin_is_configurable(tmp_path: Path) -> None:
    ctl, _, _ = make(tmp_path, iterations=3)
    ctl.general = GeneralConfig(max_iterations=3, improvement_rtol=0.1)
    ctl.scaffold.proposer = ScoreProposer(step=0.01)  # up to 0.53 over 0.5: not 10 % better
    assert asyncio.run(ctl.run_to_end()).best_program_id == "p0"


def test_improves_is_relative_and_absolute() -> None:
    assert improves(1.0, None) and improves(0.0, float("-inf"))
    assert not improves(0.5 + 2e-16, 0.5)
    assert improves(0.5 + 1e-9, 0.5)
    assert not improves(1e-16, 0.0)  # the absolute part: near zero, noise is absolute
    assert not improves(0.4, 0.5)


def test_a_native_card_scores_its_metric_in_its_direction() -> None:
    up = Objective(metric="min_dist", direction="maximize", native=True)
    down = Objective(metric="loss", direction="minimize", native=True)
    assert up.score({"min_dist": 0.2213, "eval_time": 0.5}) == 0.2213
    assert down.score({"loss": 3.0, "eval_time": 0.5}) == -3.0
    assert up.score({"combined_score": 0.9, "min_dist": 0.2}) == 0.9  # the card's score wins
    assert up.missing({"min_dist": 0.2}) == "" and up.averaged({"min_dist": 0.2}) == []
    why = up.missing({"eval_time": 0.5, "other": 1.0})
    assert "no numeric combined_score and no 'min_dist'" in why and "eval_time, other" in why
    assert "add metric:" in Objective(native=True).missing({"x": 1.0})


def test_a_compat_folder_keeps_the_references_average() -> None:
    compat = Objective()
    assert compat.score({"a": 0.2, "b": 0.5}) == pytest.approx(0.35)
    assert compat.averaged({"a": 0.2, "b": 0.5}) == ["a", "b"]
    assert compat.averaged({"combined_score": 1.0, "a": 2.0}) == []
    assert compat.missing({"a": 1.0}) == ""


class MetricEvaluator(ScoreEvaluator):
    """Returns the score under ``name`` (no combined_score), plus a timing."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name

    async def evaluate(self, code: str, *, program_id: str, iteration: int) -> EvalResult:
        result = await super().evaluate(code, program_id=program_id, iteration=iteration)
        value = result.metrics["combined_score"]
        return EvalResult(status="ok", metrics={self.name: value, "eval_time": 0.5})


def test_the_seed_without_the_objective_stops_the_run_before_any_llm_call(tmp_path: Path) -> None:
    ctl, store, model = make(tmp_path, evaluator=MetricEvaluator("other"))
    ctl.objective = Objective(metric="min_dist", native=True)
    summary = asyncio.run(ctl.run_to_end())
    assert summary.status == "failed" and model.calls == []
    error = store.get_run("r1").error
    assert error.startswith("the seed program's result has no objective: no numeric")
    assert "no LLM call was made" in error
    assert summary.best_program_id is None and store.get_run("r1").seed_score is None


def test_candidates_are_scored_by_the_cards_metric(tmp_path: Path) -> None:
    ctl, store, _ = make(tmp_path, evaluator=MetricEvaluator("min_dist"), iterations=2)
    ctl.objective = Objective(metric="min_dist", native=True)
    asyncio.run(ctl.run_to_end())
    assert [p.score for p in store.programs("r1")] == [0.5, 0.51, 0.52]  # never the mean


def _crash(path: str, line: int, error: str = "KeyError: 'evaluator bug'") -> EvalResult:
    trace = (
        "Traceback (most recent call last):\n"
        '  File "/opt/galapagos/galapagos_sandbox/runner.py", line 255, in _sealed\n'
        f'  File "{path}", line 16, in evaluate\n'
        f'  File "{path}", line {line}, in check\n'
        f"{error}\n"
    )
    return EvalResult(
        status="crash",
        metrics={"combined_score": 0.0, "validity": 0.0},
        artifacts={"error": f"the evaluator raised {error}", "traceback": trace},
    )


def test_an_evaluator_fault_is_named_by_exception_and_line_whatever_the_sandbox() -> None:
    docker = evaluator_fault(_crash("/task/evaluator.py", 8))
    local = evaluator_fault(_crash("/tmp/galapagos-local-x/trusted/task/evaluator.py", 8))
    assert docker == local == "KeyError at evaluator.py line 8: 'evaluator bug'"
    assert evaluator_fault(_crash("/task/evaluator.py", 9)) != docker
    # The candidate's own code failing inside a compat evaluator is the candidate's fault.
    assert evaluator_fault(_crash("/job/program.py", 3)) == ""
    # A candidate that crashed (its error is not the evaluator raising) is not counted.
    crashed = EvalResult(status="crash", artifacts={"error": "solve() raised ValueError: x"})
    assert evaluator_fault(crashed) == ""


class BrokenEvaluator(ScoreEvaluator):
    """Raises on every changed program (but not on the seed), always at the same line."""

    def __init__(self, line: int | None = None) -> None:
        super().__init__()
        self.line = line

    async def evaluate(self, code: str, *, program_id: str, iteration: int) -> EvalResult:
        if iteration == 0:
            return await super().evaluate(code, program_id=program_id, iteration=iteration)
        self.calls += 1
        line = self.line if self.line is not None else 8 + self.calls % 2
        return _crash("/task/evaluator.py", line)


def test_a_broken_evaluator_stops_the_run_after_k_identical_failures(tmp_path: Path) -> None:
    ctl, store, model = make(tmp_path, evaluator=BrokenEvaluator(line=8), iterations=10)
    ctl.general = GeneralConfig(max_iterations=10, max_consecutive_evaluator_errors=4)
    summary = asyncio.run(ctl.run_to_end())
    assert summary.status == "failed" and len(model.calls) == 4
    run = store.get_run("r1")
    assert run.iterations_done == 4  # the proposals were made: those iterations are done
    assert run.error.startswith(
        "the task's evaluator failed the same way on 4 consecutive candidates (KeyError at "
        "evaluator.py line 8: 'evaluator bug'); it looks broken, so the run stopped after 60 "
        "tokens."
    )
    assert "galapagos resume r1" in run.error and "--keep-going" in run.error


def test_different_evaluator_failures_or_zero_do_not_trip_the_breaker(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    alternating, _, _ = make(tmp_path / "a", evaluator=BrokenEvaluator(), iterations=8)
    alternating.general = GeneralConfig(max_iterations=8, max_consecutive_evaluator_errors=2)
    assert asyncio.run(alternating.run_to_end()).status == "completed"
    off, _, _ = make(tmp_path / "b", evaluator=BrokenEvaluator(line=8), iterations=8)
    off.general = GeneralConfig(max_iterations=8, max_consecutive_evaluator_errors=0)
    assert asyncio.run(off.run_to_end()).status == "completed"


class Outage(EchoModel):
    """Fails every call while ``down`` (an endpoint outage), answers otherwise."""

    def __init__(self) -> None:
        super().__init__()
        self.down = False

    async def generate(self, prompt: Prompt, *, purpose: str, seed: int) -> LLMCall:
        if self.down:
            raise LLMError("LLM endpoint http://127.0.0.1:9/v1 is unreachable")
        return await super().generate(prompt, purpose=purpose, seed=seed)


def _lineage(store: SQLiteStore) -> list[tuple[str, str | None, str, float]]:
    return [(p.id, p.parent_id, p.code, p.score) for p in store.programs("r1")]


def test_an_outage_then_resume_ends_as_if_the_outage_never_happened(tmp_path: Path) -> None:
    (tmp_path / "whole").mkdir()
    (tmp_path / "cut").mkdir()
    whole, store_whole, _ = make(tmp_path / "whole", iterations=8)
    asyncio.run(whole.run_to_end())

    cut, store, _ = make(tmp_path / "cut", iterations=8)
    outage = Outage()
    cut.model = outage
    cut.general = GeneralConfig(max_iterations=8, max_consecutive_infra_failures=3)

    def goes_down(progress: Progress) -> None:
        outage.down = progress.iterations_done >= 3  # iterations 4, 5, 6 get no answer

    cut.on_progress = goes_down
    assert asyncio.run(cut.run_to_end()).status == "failed"
    assert store.get_run("r1").iterations_done == 3
    assert [e.iteration for e in store.events("r1", ["iteration_not_done"])] == [4, 5, 6]

    again, _, model = make(tmp_path / "unused", iterations=8)
    again.store, again.run = store, store.get_run("r1")
    again.restore()
    summary = asyncio.run(again.run_to_end())
    assert summary.status == "completed" and summary.iterations_done == 8
    assert len(model.calls) == 5  # iterations 4..8: the outage cost no iteration
    assert _lineage(store) == _lineage(store_whole)


def test_a_failure_followed_by_a_proposal_is_a_plain_failed_iteration(tmp_path: Path) -> None:
    ctl, store, _ = make(tmp_path, iterations=4)
    outage = Outage()
    ctl.model = outage

    def blip(progress: Progress) -> None:  # only iteration 2 gets no answer
        outage.down = progress.iterations_done == 1 and not outage.down

    ctl.on_progress = blip
    summary = asyncio.run(ctl.run_to_end())
    # Iteration order is part of every method: iteration 2 is not run again after 3 and 4.
    assert summary.status == "completed" and summary.iterations_done == 4
    assert [e.iteration for e in store.events("r1", ["iteration_failed"])] == [2]
    from harness.runs import failure_summary

    failures = failure_summary(store, "r1")
    assert failures["iterations_failed"] == 1 and failures["iterations_not_done"] == 0
