"""The controller: one loop for every scaffold, and the only writer to the run store.

Iteration contract (the reference's, SkyDiscover §2.0.3 / §7.1):

- The seed program is evaluated at iteration 0 and admitted whatever its result; LLM iterations
  are ``1..max_iterations``.
- Each iteration makes up to ``general.inner_retry_times`` attempts.  An attempt fails when the
  proposal cannot become a program, or its evaluation ended non-ok or matches the failure
  predicate; the failure is fed into the next attempt's prompt.  An LLM error ends the iteration
  at once (no retry at this level; the client already retried) unless the scaffold's
  ``loop.retry_llm_errors`` makes it cost only the attempt.  A failed iteration admits nothing;
  with ``loop.admit_failed_evaluations`` an evaluated child is admitted whatever its result.
  Exception: a from-scratch attempt (no seed program, empty population) applies no failure
  check, so the first evaluated program is admitted whatever its result (§2.0.3 step 1).
- ``select`` runs once per iteration, or before every attempt with
  ``loop.resample_each_attempt``; the selection's ``tags`` go into the child's metadata.
- Block hooks ``start_iteration``/``end_iteration`` run around every iteration, failed ones and
  iteration 0 (the seed) included, and ``observe`` runs for iteration 0 too; an LLM error in a
  hook is a ``hook_skipped`` event (see :mod:`harness.core.block`).  Programs blocks create get
  ids ``p<iteration>.<n>``; an id that already exists is an error, never an overwrite.
- The run's best: a program with metrics beats one without, else the higher score (strict
  ``>``), as the reference's ``_is_better``.
- Fail fast: a seed program that cannot be evaluated stops the run before any LLM call
  (``general.stop_on_failed_seed``); ``general.max_consecutive_infra_failures`` consecutive
  iterations failing for the same infrastructure cause (LLM endpoint errors, sandbox errors)
  stop it too.  Both store the run as ``failed`` with the reason and the remedy.
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

from harness.core._iteration import (
    IterationBuffer,
    IterationStep,
    LLMHandle,
    Meter,
    program_id,
)
from harness.core.config import GeneralConfig
from harness.core.errors import (
    BudgetExhausted,
    EngineUnavailable,
    HarnessError,
    LLMError,
    RunFailed,
)
from harness.core.llm import LLM, ChatModel
from harness.core.population import ReadOnlyPopulation
from harness.core.prompt import PromptContext
from harness.core.records import (
    Attempt,
    EvalResult,
    Event,
    IterationOutcome,
    Program,
    Selection,
)
from harness.core.rng import make_rng, rng_from_state, rng_state
from harness.core.scaffold import Scaffold
from harness.core.scoring import get_score, is_failure
from harness.core.store import EvaluationRow, IterationCommit, RunRecord, RunStore

__all__ = ["Controller", "Progress", "RunSummary", "program_id"]


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
    #: Why the run stopped, as data (``harness.core.store.STOP_REASONS``).
    stop_reason: str = ""


def better(candidate: Program, incumbent: Program | None) -> bool:
    """The reference's ``_is_better``: metrics beat none, else strictly higher score (two
    programs without metrics: the incumbent stays; the reference compares timestamps)."""
    if incumbent is None:
        return True
    if bool(candidate.metrics) != bool(incumbent.metrics):
        return bool(candidate.metrics)
    return candidate.score > incumbent.score


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
        on_progress: Callable[[Progress], None] | None = None,
    ) -> None:
        self.scaffold = scaffold
        self.store = store
        self.run = run
        self.model = model
        self.meter = meter
        self.general = general
        self.seed_code = seed_code
        self.language = scaffold.task.language
        self.on_progress = on_progress
        self.max_iterations = general.max_iterations
        self.all_programs: dict[str, Program] = {}
        self.llm_rng = make_rng(run.seed, "llm")
        self.best: Program | None = None
        self.seed_score: float | None = None
        #: Why the seed program could not be evaluated (``None``: it could).
        self.seed_error: str | None = None
        #: The current run of consecutive infrastructure failures: (cause, count).
        self._infra_streak: tuple[str, int] = ("", 0)
        self.evaluations = 0
        self._done: set[int] = set()
        self._stop = False
        self.stop_reason = "stopped"
        self._notes: list[tuple[str, dict[str, Any]]] = []
        self._note_updates: dict[str, Any] = {}

    # -- public -----------------------------------------------------------------------------
    def request_stop(self, reason: str = "stopped") -> None:
        """Finish the iterations in flight, start no new one (SIGINT); ``reason`` is stored."""
        self._stop = True
        self.stop_reason = reason

    async def run_to_end(self) -> RunSummary:
        """Run (or, after :meth:`restore`, continue) until every iteration is done."""
        status, error, reason = "completed", "", "completed"
        try:
            if 0 not in self._done:
                await self._seed()
            if self.seed_error is not None and self.general.stop_on_failed_seed:
                raise RunFailed(
                    f"the seed program could not be evaluated ({self.seed_error}); no LLM call "
                    "was made. Fix the task's evaluator or initial program (galapagos task check "
                    "shows why), or set general.stop_on_failed_seed: false to search anyway",
                    reason="seed_failed",
                )
            pending = [i for i in range(1, self.max_iterations + 1) if i not in self._done]
            await self._iterate(pending)
            if self._stop and len(self._done) < self.max_iterations + 1:
                status, reason = "interrupted", self.stop_reason
        except BudgetExhausted as exc:
            status, error = "budget_exhausted", str(exc).replace("RUN_ID", self.run.id)
            reason = "budget"
        except RunFailed as exc:
            status, error, reason = "failed", str(exc), exc.reason
        except EngineUnavailable as exc:  # waited out the deadline: stop, resumable, nothing lost
            status, error = (
                "interrupted",
                str(exc).replace("galapagos resume", f"galapagos resume {self.run.id}"),
            )
            reason = "engine_unavailable"
        except asyncio.CancelledError:
            self.store.update_run(self.run.id, status="interrupted", stop_reason="cancelled")
            raise
        except BaseException as exc:
            self.store.update_run(
                self.run.id,
                status="failed",
                error=f"{type(exc).__name__}: {exc}",
                stop_reason="error",
            )
            raise
        if reason != "owner_lost":  # else the run is another process's now: leave it alone
            self.store.update_run(self.run.id, status=status, error=error, stop_reason=reason)
        return dataclasses.replace(self.summary(status), stop_reason=reason)

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
        self.seed_error = ctl.get("seed_error")
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
        """Iteration 0: the seed program is evaluated and admitted whatever its result; block
        hooks and ``observe`` run around it like any iteration."""
        started = time.monotonic()
        buffer = IterationBuffer(0)
        step = self._step(buffer)
        outcome: IterationOutcome | None = None
        try:
            await self._hooks("start_iteration", step)
            outcome = await self._evaluate_seed(buffer)
            self._observe(outcome)
            await self._hooks("end_iteration", step, outcome)
        except BudgetExhausted as exc:  # a hook's LLM call found the budget spent
            buffer.budget_spent = buffer.budget_spent or exc
        self._commit(buffer, "ok", started)
        if buffer.budget_spent is not None:
            raise buffer.budget_spent

    async def _evaluate_seed(self, buffer: IterationBuffer) -> IterationOutcome:
        if self.seed_code is None:
            buffer.event("seed", status="absent", note="no initial program: from-scratch start")
            return IterationOutcome(0, None, None)
        pid = program_id(0)
        result = await self.scaffold.evaluator.evaluate(self.seed_code, program_id=pid, iteration=0)
        self.evaluations += 1
        buffer.evaluations.append(EvaluationRow(0, 0, pid, result, code=self.seed_code))
        _note_faults(buffer, 0, result)
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
        if failed:
            lines = [line.strip() for line in (result.error or "").splitlines() if line.strip()]
            self.seed_error = f"{result.status}: {lines[-1][:300]}" if lines else result.status
        admitted = self._admit(seed, buffer)
        return IterationOutcome(0, None, seed, (), result, admitted, 1)

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
                for task in done:  # several may fail at once (one engine outage): see them all
                    if not task.cancelled():
                        task.exception()
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
        step = self._step(buffer)
        outcome: IterationOutcome | None = None
        try:
            await self._hooks("start_iteration", step)
            outcome = await self._attempts(iteration, buffer, step.llm)
            if outcome.child is not None:
                admitted = self._admit(outcome.child, buffer)
                outcome = dataclasses.replace(outcome, admitted=admitted)
            else:
                buffer.event("iteration_failed", attempts=outcome.attempts_used)
            self._observe(outcome)
            await self._hooks("end_iteration", step, outcome)
        except BudgetExhausted as exc:  # a hook's LLM call found the budget spent
            buffer.budget_spent = buffer.budget_spent or exc
            if outcome is None:
                buffer.event("iteration_failed", attempts=0, reason="budget_exhausted")
        # Committed even when the budget ran out midway: its calls are paid for and counted.
        ok = outcome is not None and outcome.child is not None
        self._commit(buffer, "ok" if ok else "failed", started)
        if buffer.budget_spent is not None:
            raise buffer.budget_spent
        if outcome is not None:
            self._count_infra_failure(outcome)

    def _count_infra_failure(self, outcome: IterationOutcome) -> None:
        """Stop the run when the same infrastructure cause failed too many iterations in a row."""
        cause = _infra_cause(outcome)
        last, count = self._infra_streak
        self._infra_streak = (cause, count + 1 if cause and cause == last else 1 if cause else 0)
        limit = self.general.max_consecutive_infra_failures
        cause, count = self._infra_streak
        if limit and cause and count >= limit:
            raise RunFailed(
                f"{count} consecutive iterations failed for the same reason ({cause}); stopped "
                f"to save the budget. Fix the cause and continue with: galapagos resume "
                f"{self.run.id}",
                reason="infra_streak",
            )

    def _step(self, buffer: IterationBuffer) -> IterationStep:
        llm = LLMHandle(self.model, self.llm_rng, buffer, log_prompts=self.general.log_prompts)
        return IterationStep(
            buffer,
            llm,
            max_iterations=self.max_iterations,
            programs=self.all_programs,
            register=self._register,
        )

    def _register(self, program: Program, buffer: IterationBuffer) -> None:
        """Record a new program of this iteration (stored with its commit); ids are unique."""
        if program.id in self.all_programs:
            raise HarnessError(
                f"run {self.run.id}: program id {program.id} already exists (iteration "
                f"{buffer.iteration} would overwrite it); this is a bug in a block"
            )
        self.all_programs[program.id] = program
        buffer.programs.append(program)

    async def _hooks(self, hook: str, step: IterationStep, *args: Any) -> None:
        """Run ``hook`` of every block in order; an LLM error skips that block's hook."""
        for slot, block in self.scaffold.blocks():
            try:
                await getattr(block, hook)(step, *args)
            except LLMError as exc:
                step.event(
                    "hook_skipped",
                    slot=slot,
                    block=self.scaffold.block_names.get(slot, type(block).__name__),
                    hook=hook,
                    error=str(exc)[:500],
                )

    def _observe(self, outcome: IterationOutcome) -> None:
        self.scaffold.selection.observe(outcome)
        self.scaffold.memory.observe(outcome)

    async def _attempts(
        self, iteration: int, buffer: IterationBuffer, llm: LLM
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
                if scaffold.loop.retry_llm_errors:
                    continue
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
            _note_faults(buffer, index, result)
            failed = result.status != "ok" or is_failure(result.metrics, result.artifacts)
            # From scratch (empty population, no parent) the reference applies no failure
            # check: the first evaluated program is admitted whatever its result.
            from_scratch = selection.parent is None and len(scaffold.population) == 0
            admit_anyway = from_scratch or scaffold.loop.admit_failed_evaluations
            if failed and not admit_anyway:
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
                metadata={
                    **selection.tags,
                    "parent_score": parent.score if parent else None,
                    "attempt": index,
                    # The reference's field names (EvoX strategies may read them).
                    "changes": proposal.changes,
                    "parent_metrics": dict(parent.metrics) if parent else None,
                },
            )
            if failed:  # admitted anyway: from scratch, or the scaffold admits failures
                buffer.event(
                    "attempt",
                    attempt=index,
                    outcome="ok",
                    score=child.score,
                    from_scratch=from_scratch,
                    status=result.status,
                    failed=True,
                    error=result.error[-500:],
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
        scaffold = self.scaffold
        return PromptContext(
            iteration=iteration,
            task=scaffold.task,
            attempts=tuple(attempts),
            memory=scaffold.memory.render(selection, iteration),
            population=ReadOnlyPopulation(scaffold.population),
            best=self.best,
        )

    def _admit(self, program: Program, buffer: IterationBuffer) -> bool:
        self._register(program, buffer)
        admitted = self.scaffold.population.add(program)
        new_best = admitted and better(program, self.best)
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
                "seed_error": self.seed_error,
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


def _note_faults(buffer: IterationBuffer, attempt: int, result: EvalResult) -> None:
    """An evaluation that survived infrastructure faults says so (they are not its result)."""
    if result.infra_retries:
        buffer.event(
            "infrastructure_retry", attempt=attempt, faults=[f[:300] for f in result.infra_retries]
        )


def _infra_cause(outcome: IterationOutcome) -> str:
    """The infrastructure cause every attempt of a failed iteration shares ("" if none): the
    LLM endpoint's error, or the sandbox reporting an ``error`` status."""
    if outcome.child is not None or not outcome.attempts:
        return ""
    causes = set()
    for attempt in outcome.attempts:
        if attempt.stage == "llm":
            causes.add("LLM: " + _first_line(attempt.error))
        elif (
            attempt.stage == "evaluate"
            and outcome.result is not None
            and (outcome.result.status == "error")
        ):
            causes.add("sandbox: " + _first_line(attempt.error))
        else:
            return ""
    return causes.pop() if len(causes) == 1 else ""


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0][:200] if lines else "unknown"


def _describe(selection: Selection) -> dict[str, Any]:
    return {
        "parent": selection.parent.id if selection.parent else None,
        "parent_score": selection.parent.score if selection.parent else None,
        "inspirations": [p.id for p in selection.inspirations],
        "label": selection.parent_label[:200],
        "info": dict(selection.info),
        **({"tags": dict(selection.tags)} if selection.tags else {}),
    }
