"""The controller: one loop for every scaffold, and the only writer to the run store.

Iteration contract (the reference's, SkyDiscover §2.0.3 / §7.1):

- The seed program is evaluated at iteration 0 and admitted whatever its result; LLM iterations
  are ``1..max_iterations``.
- Each iteration makes up to ``general.inner_retry_times`` attempts.  An attempt fails when the
  proposal cannot become a program, or its evaluation ended non-ok or matches the failure
  predicate; the failure is fed into the next attempt's prompt.  An LLM error ends the iteration
  at once (no retry at this level; the client already retried).  A failed iteration admits
  nothing.  Exception: a from-scratch attempt (no seed program, empty population) applies no
  failure check, so the first evaluated program is admitted whatever its result (§2.0.3 step 1).
- Hooks ``start_iteration``/``end_iteration`` run around every iteration, failed ones included.
- Budget: no iteration starts once the token/cost budget is spent.  When it runs out inside an
  iteration (a call refused by the meter), that attempt ends the iteration like an LLM error;
  the iteration is committed as failed with the calls it made, iterations already in flight
  finish, and the run stops with status ``budget_exhausted``.
- Every decision is an event; each iteration is committed in one transaction with a checkpoint
  of all component state, so ``resume`` continues exactly (sequential runs).
- With ``max_parallel_iterations > 1`` (where the scaffold allows), iterations overlap: LLM
  calls and evaluations of different iterations run concurrently; outcomes are admitted in
  completion order, so such runs are not bit-reproducible.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from harness.core._iteration import ChatModel, HookCtx, IterationBuffer, LLMHandle, Meter
from harness.core.config import GeneralConfig
from harness.core.errors import BudgetExhausted, LLMError
from harness.core.prompt import PromptContext
from harness.core.records import Attempt, Event, IterationOutcome, Program, Selection
from harness.core.rng import make_rng, rng_from_state, rng_state
from harness.core.scaffold import Scaffold
from harness.core.scoring import get_score, is_failure
from harness.store.base import EvaluationRow, IterationCommit, RunRecord, RunStore

__all__ = ["Controller", "Progress", "RunSummary"]

#: Previous-attempts section: the best ``HISTORY_SIZE`` of the last ``HISTORY_WINDOW`` programs.
HISTORY_WINDOW = 100
HISTORY_SIZE = 3


@dataclass(frozen=True)
class Progress:
    iterations_done: int
    max_iterations: int
    best_score: float | None
    evaluations: int
    tokens: int
    cost: float


@dataclass(frozen=True)
class RunSummary:
    run_id: str
    status: str
    iterations_done: int
    seed_score: float | None
    best_score: float | None
    best_program_id: str | None


def program_id(iteration: int) -> str:
    """The id of the child admitted in ``iteration`` (at most one per iteration)."""
    return f"p{iteration}"


class Controller:
    def __init__(
        self,
        scaffold: Scaffold,
        *,
        store: RunStore,
        run: RunRecord,
        model: ChatModel,
        meter: Meter,
        general: GeneralConfig,
        seed_code: str | None,
        task_description: str = "",
        language: str = "python",
        eval_timeout_s: float | None = None,
        on_progress: Callable[[Progress], None] | None = None,
    ) -> None:
        self.scaffold = scaffold
        self.store = store
        self.run = run
        self.model = model
        self.meter = meter
        self.general = general
        self.seed_code = seed_code
        self.task_description = task_description
        self.language = language
        self.eval_timeout_s = eval_timeout_s
        self.on_progress = on_progress
        self.max_iterations = general.max_iterations
        self.all_programs: dict[str, Program] = {}
        self.llm_rng = make_rng(run.seed, "llm")
        self.best: Program | None = None
        self.seed_score: float | None = None
        self.evaluations = 0
        self._done: set[int] = set()
        self._stop = False
        self._notes: list[tuple[str, dict[str, Any]]] = []
        self._note_updates: dict[str, Any] = {}

    # -- public -----------------------------------------------------------------------------
    def request_stop(self) -> None:
        """Finish the iterations in flight, start no new one (SIGINT)."""
        self._stop = True

    async def run_to_end(self) -> RunSummary:
        """Run (or, after :meth:`restore`, continue) until every iteration is done."""
        status, error = "completed", ""
        try:
            if 0 not in self._done:
                await self._seed()
            pending = [i for i in range(1, self.max_iterations + 1) if i not in self._done]
            await self._iterate(pending)
            if self._stop and len(self._done) < self.max_iterations + 1:
                status = "interrupted"
        except BudgetExhausted as exc:
            status, error = "budget_exhausted", str(exc).replace("RUN_ID", self.run.id)
        except asyncio.CancelledError:
            self.store.update_run(self.run.id, status="interrupted")
            raise
        except BaseException as exc:
            self.store.update_run(
                self.run.id, status="failed", error=f"{type(exc).__name__}: {exc}"
            )
            raise
        self.store.update_run(self.run.id, status=status, error=error)
        return self.summary(status)

    def note(
        self, kind: str, *, run_updates: Mapping[str, Any] | None = None, **payload: Any
    ) -> None:
        """An event from outside the loop (e.g. budget caps a resume changed), committed with
        the next iteration together with ``run_updates`` to the run record (one transaction)."""
        self._notes.append((kind, payload))
        self._note_updates.update(run_updates or {})

    def restore(self) -> None:
        """Load programs and the latest checkpoint of ``self.run`` from the store."""
        programs = {p.id: p for p in self.store.programs(self.run.id)}
        self.all_programs = programs
        checkpoint = self.store.checkpoint(self.run.id)
        if checkpoint is None:
            return  # nothing committed yet: start from the seed
        _, state = checkpoint
        self.scaffold.load_state_dict(state["scaffold"], programs)
        ctl = state["controller"]
        rng_from_state(self.llm_rng, ctl["llm_rng"])
        self.meter.load_state_dict(ctl["meter"])
        self.model.load_state_dict(ctl["model"])
        self.best = programs.get(ctl["best"]) if ctl.get("best") else None
        self.seed_score = ctl.get("seed_score")
        self.evaluations = int(ctl.get("evaluations", 0))
        self._done = self.store.done_iterations(self.run.id)

    def summary(self, status: str) -> RunSummary:
        return RunSummary(
            run_id=self.run.id,
            status=status,
            iterations_done=max(0, len(self._done) - (1 if 0 in self._done else 0)),
            seed_score=self.seed_score,
            best_score=self.best.score if self.best else None,
            best_program_id=self.best.id if self.best else None,
        )

    # -- the loop ---------------------------------------------------------------------------
    async def _seed(self) -> None:
        buffer = IterationBuffer(0)
        if self.seed_code is None:
            buffer.event("seed", status="absent", note="no initial program: from-scratch start")
            self._commit(buffer, "ok", time.monotonic())
            return
        started = time.monotonic()
        pid = program_id(0)
        result = await self.scaffold.evaluator.evaluate(self.seed_code, program_id=pid, iteration=0)
        self.evaluations += 1
        buffer.evaluations.append(EvaluationRow(0, 0, pid, result, code=self.seed_code))
        seed = Program(
            id=pid,
            code=self.seed_code,
            iteration=0,
            metrics=dict(result.metrics),
            score=get_score(result.metrics),
            language=self.language,
            artifacts=dict(result.artifacts),
        )
        failed = result.status != "ok" or is_failure(result.metrics, result.artifacts)
        buffer.event(
            "seed",
            program=pid,
            status=result.status,
            score=seed.score,
            failed=failed,
            error=result.error if failed else "",
        )
        self.seed_score = seed.score
        self._admit(seed, buffer)
        self._commit(buffer, "ok", started)

    async def _iterate(self, pending: Iterable[int]) -> None:
        """Run ``pending`` iterations; once the budget is spent, start none and let the
        iterations in flight finish and commit (their calls are paid for), then stop."""
        limit = self.general.max_parallel_iterations if self.scaffold.parallel_ok else 1
        queue = list(pending)
        in_flight: set[asyncio.Task[None]] = set()
        spent: BudgetExhausted | None = None
        try:
            while (queue and spent is None and not self._stop) or in_flight:
                while queue and spent is None and not self._stop and len(in_flight) < limit:
                    try:
                        self.meter.check()
                    except BudgetExhausted as exc:
                        spent = exc
                        break
                    in_flight.add(asyncio.create_task(self._one_iteration(queue.pop(0))))
                if not in_flight:
                    break
                done, in_flight = await asyncio.wait(in_flight, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    try:
                        task.result()  # re-raise infrastructure errors
                    except BudgetExhausted as exc:
                        spent = spent or exc
        finally:
            for task in in_flight:
                task.cancel()
            if in_flight:
                await asyncio.gather(*in_flight, return_exceptions=True)
        if spent is not None:
            raise spent

    async def _one_iteration(self, iteration: int) -> None:
        started = time.monotonic()
        buffer = IterationBuffer(iteration)
        llm = LLMHandle(self.model, self.llm_rng, buffer, log_prompts=self.general.log_prompts)
        ctx = HookCtx(self, buffer, llm)
        outcome: IterationOutcome | None = None
        try:
            await self.scaffold.start_iteration(iteration, ctx)
            outcome = await self._attempts(iteration, buffer, llm)
            if outcome.child is not None:
                admitted = self._admit(outcome.child, buffer)
                outcome = dataclasses.replace(outcome, admitted=admitted)
            else:
                buffer.event("iteration_failed", attempts=outcome.attempts_used)
            self.scaffold.selection.observe(outcome)
            self.scaffold.memory.observe(outcome)
            await self.scaffold.end_iteration(iteration, outcome, ctx)
        except BudgetExhausted as exc:  # a hook's LLM call found the budget spent
            buffer.budget_spent = buffer.budget_spent or exc
            if outcome is None:
                buffer.event("iteration_failed", attempts=0, reason="budget_exhausted")
        # Committed even when the budget ran out midway: its calls are paid for and counted.
        ok = outcome is not None and outcome.child is not None
        self._commit(buffer, "ok" if ok else "failed", started)
        if buffer.budget_spent is not None:
            raise buffer.budget_spent

    async def _attempts(
        self, iteration: int, buffer: IterationBuffer, llm: LLMHandle
    ) -> IterationOutcome:
        scaffold = self.scaffold
        attempts: list[Attempt] = []
        selection: Selection | None = None
        result = None
        used = 0
        for index in range(self.general.inner_retry_times):
            used = index + 1
            buffer.attempt = index
            if selection is None or scaffold.resample_each_attempt:
                selection = scaffold.selection.select(scaffold.population, iteration)
                buffer.event("select", attempt=index, **_describe(selection))
            context = self._prompt_context(iteration, attempts, selection)
            prompt = scaffold.prompt_builder.build(selection, context)
            try:
                proposal = await scaffold.proposer.propose(prompt, selection.parent, llm)
            except LLMError as exc:
                attempts.append(Attempt(index, "llm", str(exc)))
                buffer.event("attempt", attempt=index, outcome="llm_error", error=str(exc))
                break
            except BudgetExhausted as exc:  # ends the iteration like an LLM error, then the run
                attempts.append(Attempt(index, "llm", str(exc)))
                buffer.event("attempt", attempt=index, outcome="budget_exhausted", error=str(exc))
                buffer.budget_spent = exc
                break
            if not proposal.ok:
                attempts.append(
                    Attempt(index, "propose", proposal.error, response=proposal.response[-4000:])
                )
                buffer.event(
                    "attempt", attempt=index, outcome="proposal_rejected", error=proposal.error
                )
                continue
            code = proposal.code or ""
            pid = program_id(iteration)
            result = await scaffold.evaluator.evaluate(code, program_id=pid, iteration=iteration)
            self.evaluations += 1
            buffer.evaluations.append(EvaluationRow(iteration, index, pid, result, code=code))
            failed = result.status != "ok" or is_failure(result.metrics, result.artifacts)
            # From scratch (empty population, no parent) the reference applies no failure
            # check: the first evaluated program is admitted whatever its result.
            from_scratch = selection.parent is None and len(scaffold.population) == 0
            if failed and not from_scratch:
                attempts.append(
                    Attempt(
                        index,
                        "evaluate",
                        result.error or result.status,
                        code=code,
                        traceback=str(result.artifacts.get("traceback", "")),
                        metrics=dict(result.metrics),
                    )
                )
                buffer.event(
                    "attempt",
                    attempt=index,
                    outcome="evaluation_failed",
                    status=result.status,
                    failed_stage=result.failed_stage,
                    error=result.error[-500:],
                )
                continue
            parent = selection.parent
            child = Program(
                id=pid,
                code=code,
                iteration=iteration,
                metrics=dict(result.metrics),
                score=get_score(result.metrics),
                parent_id=parent.id if parent else None,
                inspiration_ids=tuple(p.id for p in selection.inspirations),
                parent_label=selection.parent_label,
                generation=(parent.generation + 1) if parent else 0,
                language=self.language,
                changes=proposal.changes,
                artifacts=dict(result.artifacts),
                metadata={"parent_score": parent.score if parent else None, "attempt": index},
            )
            if from_scratch:
                buffer.event(
                    "attempt",
                    attempt=index,
                    outcome="ok",
                    score=child.score,
                    from_scratch=True,
                    status=result.status,
                    failed=failed,
                )
            else:
                buffer.event("attempt", attempt=index, outcome="ok", score=child.score)
            return IterationOutcome(
                iteration, selection, child, tuple(attempts), result, False, used
            )
        return IterationOutcome(iteration, selection, None, tuple(attempts), result, False, used)

    def _prompt_context(
        self, iteration: int, attempts: list[Attempt], selection: Selection
    ) -> PromptContext:
        population = self.scaffold.population
        recent = list(population.programs())[-HISTORY_WINDOW:]
        history = sorted(recent, key=lambda p: -p.score)[:HISTORY_SIZE]
        return PromptContext(
            iteration=iteration,
            task_description=self.task_description,
            language=self.language,
            attempts=tuple(attempts),
            memory=self.scaffold.memory.render(selection, iteration),
            stats={
                "population_size": len(population),
                "best_score": self.best.score if self.best else None,
            },
            eval_timeout_s=self.eval_timeout_s,
            history=tuple(history),
        )

    def _admit(self, program: Program, buffer: IterationBuffer) -> bool:
        self.all_programs[program.id] = program
        buffer.programs.append(program)
        admitted = self.scaffold.admit(program, buffer.iteration)
        new_best = admitted and (self.best is None or program.score > self.best.score)
        if new_best:
            self.best = program
        buffer.event(
            "admit",
            program=program.id,
            admitted=admitted,
            score=program.score,
            new_best=new_best,
            parent=program.parent_id,
        )
        return admitted

    def _commit(self, buffer: IterationBuffer, status: str, started: float) -> None:
        self._done.add(buffer.iteration)
        notes = [Event(buffer.iteration, kind, payload) for kind, payload in self._notes]
        buffer.events[:0] = notes
        self._notes.clear()
        best = self.best
        state = {
            "scaffold": self.scaffold.state_dict(),
            "controller": {
                "llm_rng": rng_state(self.llm_rng),
                "meter": self.meter.state_dict(),
                "model": self.model.state_dict(),
                "best": best.id if best else None,
                "seed_score": self.seed_score,
                "evaluations": self.evaluations,
            },
        }
        updates: dict[str, Any] = {
            "iterations_done": max(0, len(self._done) - (1 if 0 in self._done else 0)),
            "best_program_id": best.id if best else None,
            "best_score": best.score if best else None,
            "seed_score": self.seed_score,
            "prompt_tokens": self.meter.prompt_tokens,
            "completion_tokens": self.meter.completion_tokens,
            "cost": self.meter.cost,
            **self._note_updates,
        }
        self._note_updates = {}
        self.store.commit_iteration(
            IterationCommit(
                run_id=self.run.id,
                iteration=buffer.iteration,
                status=status,
                programs=buffer.programs,
                evaluations=buffer.evaluations,
                llm_calls=buffer.llm_calls,
                events=buffer.events,
                checkpoint=state,
                run_updates=updates,
                best_score=best.score if best else None,
                duration_s=time.monotonic() - started,
            )
        )
        if self.on_progress:
            self.on_progress(
                Progress(
                    iterations_done=updates["iterations_done"],
                    max_iterations=self.max_iterations,
                    best_score=updates["best_score"],
                    evaluations=self.evaluations,
                    tokens=self.meter.prompt_tokens + self.meter.completion_tokens,
                    cost=self.meter.cost,
                )
            )


def _describe(selection: Selection) -> dict[str, Any]:
    return {
        "parent": selection.parent.id if selection.parent else None,
        "parent_score": selection.parent.score if selection.parent else None,
        "inspirations": [p.id for p in selection.inspirations],
        "label": selection.parent_label[:200],
        "info": dict(selection.info),
    }
