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
- The run's best: a program with metrics beats one without, else the higher score by more
  than float noise (:func:`~harness.core.scoring.improves`, ``general.improvement_rtol`` and
  ``improvement_atol``), as the reference's ``_is_better`` otherwise.  A seed that failed to
  evaluate is never the run's best.
- The score is the task's :class:`~harness.core.scoring.Objective`: a native card's
  ``combined_score`` or its metric in its direction; a result without it is a failed attempt,
  and a seed without it stops the run before any LLM call.  A compat folder whose seed has no
  ``combined_score`` is scored by the reference's mean rule, announced once (a notice and an
  ``objective`` event naming the metrics averaged).
- Fail fast: a seed program that cannot be evaluated stops the run before any LLM call
  (``general.stop_on_failed_seed``); ``general.max_consecutive_infra_failures`` consecutive
  iterations failing for the same infrastructure cause (LLM endpoint errors, sandbox errors)
  stop it too, and so does the task's evaluator raising the same exception at the same line
  for ``general.max_consecutive_evaluator_errors`` consecutive candidates.  All store the run
  as ``failed`` with the reason and the remedy.
- The iterations at the *end* of a run that got no proposal (every attempt ended with an LLM
  error, or the budget refused its call: an endpoint outage, a spent budget) are committed with
  their calls but are not *done*: their commits checkpoint the state from before them, so a
  resume runs them again, in order, as if they had never been tried (with the offline model, a
  run resumed after an outage ends identical to one that had none).  Iterations run in order
  because methods depend on it (schedules, migrations, EvoX's last-iteration scoring): once a
  later iteration gets its proposal, an earlier one without is a plain failed iteration.  A run
  that ends with such iterations stops ``interrupted`` with the reason (resume continues it).
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
import re
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
from harness.core.block import Block
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
    Proposal,
    Selection,
)
from harness.core.rng import make_rng, rng_from_state, rng_state
from harness.core.scaffold import Scaffold
from harness.core.scoring import Objective, improves, is_failure
from harness.core.store import EvaluationRow, IterationCommit, RunRecord, RunStore

__all__ = ["AttemptResult", "Controller", "Progress", "RunSummary", "program_id"]


@dataclass(frozen=True)
class AttemptResult:
    """One attempt's end: the child it made, or why it failed (shown to the next attempt)."""

    child: Program | None = None
    failure: Attempt | None = None
    #: Its evaluation, if it got that far.
    result: EvalResult | None = None
    #: No further attempt in this iteration (an LLM error, a spent budget).
    stop: bool = False


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


def better(
    candidate: Program, incumbent: Program | None, *, rtol: float = 0.0, atol: float = 0.0
) -> bool:
    """The reference's ``_is_better``: metrics beat none, else a higher score, here by more than
    the margin (two programs without metrics: the incumbent stays; the reference compares
    timestamps)."""
    if incumbent is None:
        return True
    if bool(candidate.metrics) != bool(incumbent.metrics):
        return bool(candidate.metrics)
    return improves(candidate.score, incumbent.score, rtol=rtol, atol=atol)


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
        objective: Objective | None = None,
        on_notice: Callable[[str], None] | None = None,
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
        self.on_notice = on_notice
        self.objective = objective or Objective()
        self.max_iterations = general.max_iterations
        self.all_programs: dict[str, Program] = {}
        self.llm_rng = make_rng(run.seed, "llm")
        self.best: Program | None = None
        self.seed_score: float | None = None
        #: Why the seed program could not be evaluated (``None``: it could).
        self.seed_error: str | None = None
        #: The current run of consecutive infrastructure failures: (cause, count).
        self._infra_streak: tuple[str, int] = ("", 0)
        #: The current run of candidates the evaluator itself failed on the same way.
        self._evaluator_streak: tuple[str, int] = ("", 0)
        self.evaluations = 0
        self._done: set[int] = set()
        #: The latest iteration in ``_done`` (kept as iterations are done; ``None``: not known).
        self._last_done: int | None = None
        #: The trailing iterations committed without a proposal (LLM errors, budget): not done,
        #: to be run again by a resume (iteration → why).
        self._undone: dict[int, str] = {}
        #: Iterations a previous session left not done and this one has not run again yet.
        self._rerun: dict[int, str] = {}
        #: The state a resume restores while iterations are undone: that of the last commit
        #: before them (scaffold, LLM RNGs), so they rerun as if never tried.
        self._kept: dict[str, Any] | None = None
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
                raise RunFailed(_seed_failure(self.seed_error), reason="seed_failed")
            pending = [i for i in range(1, self.max_iterations + 1) if i not in self._done]
            await self._iterate(pending)
            if self._stop and len(self._done) < self.max_iterations + 1:
                status, reason = "interrupted", self.stop_reason
            elif self._undone:
                status, error, reason = "interrupted", self._undone_reason(), "no_proposal"
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
        # The checkpoint holds the state from before the iterations left not done: they run
        # again first, in order.
        self._rerun = {int(i): str(why) for i, why in (ctl.get("undone") or {}).items()}
        self._done = self.store.done_iterations(self.run.id) - set(self._rerun)
        self._last_done = None
        self._kept = {
            "scaffold": state["scaffold"],
            "llm_rng": ctl["llm_rng"],
            "model": ctl["model"],
        }

    def _undone_reason(self) -> str:
        causes = sorted(set(self._undone.values()))
        shown = ", ".join(str(i) for i in sorted(self._undone)[:10])
        more = " …" if len(self._undone) > 10 else ""
        return (
            f"{len(self._undone)} iteration(s) got no proposal ({shown}{more}: "
            f"{'; '.join(causes)[:300]}); they count as not done. Continue with: galapagos "
            f"resume {self.run.id}"
        )

    def _notice(self, text: str) -> None:
        if self.on_notice is not None:
            self.on_notice(text)

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
            score=self.objective.score(result.metrics),
            language=self.language,
            artifacts=dict(result.artifacts),
        )
        failed = result.status != "ok" or is_failure(result.metrics, result.artifacts)
        no_objective = "" if failed else self.objective.missing(result.metrics)
        error = result.error if failed else no_objective
        buffer.event(
            "seed",
            program=pid,
            status=result.status,
            score=seed.score,
            failed=failed or bool(no_objective),
            error=error,
        )
        self.seed_score = None if failed or no_objective else seed.score
        if failed:
            lines = [line.strip() for line in (result.error or "").splitlines() if line.strip()]
            self.seed_error = f"{result.status}: {lines[-1][:300]}" if lines else result.status
        elif no_objective:
            self.seed_error = f"no_objective: {no_objective}"
        elif averaged := self.objective.averaged(result.metrics):
            buffer.event("objective", rule="mean", metrics=averaged)
            self._notice(
                f"the evaluator returns no combined_score: the score is the mean of "
                f"{', '.join(averaged)} (the OpenEvolve/SkyDiscover rule for a folder without a "
                "task.yaml); return combined_score to choose the objective"
            )
        admitted = self._admit(seed, buffer, can_be_best=self.seed_error is None)
        return IterationOutcome(0, None, seed, (), result, admitted, 1)

    async def _iterate(self, pending: Iterable[int]) -> None:
        """Run ``pending`` iterations; once the budget is spent, start none and let the
        iterations in flight finish and commit (their calls are paid for), then stop."""
        limit = self.general.max_parallel_iterations if self.scaffold.parallel_ok else 1
        if limit == 1:
            await self._in_order(pending)
            return
        queue = list(pending)
        in_flight: set[asyncio.Task[None]] = set()
        spent: BudgetExhausted | None = None
        try:
            while (queue and spent is None and not self._stop) or in_flight:
                if spent is None:
                    spent = self._start(queue, in_flight, limit)
                if not in_flight:
                    break
                done, in_flight = await asyncio.wait(in_flight, return_when=asyncio.FIRST_COMPLETED)
                spent = spent or _finished(done)
        finally:
            for task in in_flight:
                task.cancel()
            if in_flight:
                await asyncio.gather(*in_flight, return_exceptions=True)
        if spent is not None:
            raise spent

    async def _in_order(self, pending: Iterable[int]) -> None:
        """One iteration at a time, awaited where it runs: what ``_iterate`` does with one in
        flight, without a task and a wait per iteration.  Each iteration first gives the event
        loop a turn, as a new task would (an iteration that never waits, e.g. an offline model
        and an in-process evaluator, still lets the loop's other tasks run)."""
        for iteration in pending:
            if self._stop:
                return
            self.meter.check()  # a spent budget starts no iteration (raised as ``_iterate`` does)
            await asyncio.sleep(0)
            await self._one_iteration(iteration)

    def _start(
        self, queue: list[int], in_flight: set[asyncio.Task[None]], limit: int
    ) -> BudgetExhausted | None:
        """Start the next iterations of ``queue`` while fewer than ``limit`` are in flight;
        the meter's refusal when the budget is spent."""
        while queue and not self._stop and len(in_flight) < limit:
            try:
                self.meter.check()
            except BudgetExhausted as exc:
                return exc
            in_flight.add(asyncio.create_task(self._one_iteration(queue.pop(0))))
        return None

    async def _one_iteration(self, iteration: int) -> None:
        started = time.monotonic()
        buffer = IterationBuffer(iteration)
        outcome = await self._run_iteration(buffer)
        # Committed even when the budget ran out midway: its calls are paid for and counted.
        ok = outcome is not None and outcome.child is not None
        self._track_done(iteration, outcome, buffer, ok)
        self._commit(buffer, "ok" if ok else "failed", started)
        if buffer.budget_spent is not None:
            raise buffer.budget_spent
        if outcome is not None:
            self._count_infra_failure(outcome)
        self._check_evaluator_streak()

    async def _run_iteration(self, buffer: IterationBuffer) -> IterationOutcome | None:
        """Hooks, attempts, admission and ``observe`` of one iteration (``None``: the budget
        ran out before its attempts)."""
        step = self._step(buffer)
        outcome: IterationOutcome | None = None
        try:
            await self._hooks("start_iteration", step)
            outcome = await self._attempts(buffer.iteration, buffer, step)
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
        return outcome

    def _track_done(
        self, iteration: int, outcome: IterationOutcome | None, buffer: IterationBuffer, ok: bool
    ) -> None:
        """An iteration at the end of the run that got no proposal stays not done (a resume
        runs it again); any other is done, and so are earlier ones left without a proposal."""
        no_proposal = "" if ok or buffer.programs else _no_proposal(outcome, buffer)
        if no_proposal and iteration > self._latest_done():
            self._undone[iteration] = no_proposal
            buffer.event("iteration_not_done", reason=no_proposal)
        else:  # this one is done: earlier iterations without a proposal are plain failures
            self._mark_done(i for i in self._undone if i < iteration)
            self._undone = {i: why for i, why in self._undone.items() if i > iteration}

    def _latest_done(self) -> int:
        """The latest done iteration (0: none); ``_done`` and ``_undone`` never share one."""
        if self._last_done is None:
            self._last_done = max((i for i in self._done if i not in self._undone), default=0)
        return self._last_done

    def _mark_done(self, iterations: Iterable[int]) -> None:
        for i in iterations:
            self._done.add(i)
            if self._last_done is not None and i > self._last_done:
                self._last_done = i

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

    def _count_evaluator_fault(self, result: EvalResult | None) -> None:
        """Follow the run of consecutive candidates the evaluator itself failed on the same way
        (same exception, same line); any other evaluation ends it."""
        fault = evaluator_fault(result) if result is not None else ""
        last, count = self._evaluator_streak
        count = count + 1 if fault and fault == last else 1 if fault else 0
        self._evaluator_streak = (fault, count)

    def _check_evaluator_streak(self) -> None:
        limit = self.general.max_consecutive_evaluator_errors
        fault, count = self._evaluator_streak
        if limit and fault and count >= limit:
            tokens = self.meter.prompt_tokens + self.meter.completion_tokens
            raise RunFailed(
                f"the task's evaluator failed the same way on {count} consecutive candidates "
                f"({fault}); it looks broken, so the run stopped after {tokens} tokens. Fix the "
                f"evaluator (galapagos task check shows why) and continue with: galapagos resume "
                f"{self.run.id} (or run with --keep-going to search anyway)",
                reason="evaluator_broken",
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
        """Run ``hook`` of every block in order; an LLM error skips that block's hook.  A hook
        a block leaves as ``Block``'s (a no-op) is not called."""
        noop = getattr(Block, hook)
        for slot, block in self.scaffold.blocks():
            if getattr(type(block), hook, None) is noop:
                continue
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
        self, iteration: int, buffer: IterationBuffer, step: IterationStep
    ) -> IterationOutcome:
        """Up to ``general.inner_retry_times`` attempts, until one makes a child; selection once,
        or before every attempt with ``loop.resample_each_attempt``."""
        failures: list[Attempt] = []
        selection: Selection | None = None
        result: EvalResult | None = None
        used = 0
        for index in range(self.general.inner_retry_times):
            used = index + 1
            buffer.attempt = index
            if selection is None or self.scaffold.resample_each_attempt:
                selection = await self._select(index, buffer, step)
            tried = await self._attempt(index, selection, failures, buffer, step.llm)
            result = tried.result if tried.result is not None else result
            if tried.child is not None:
                return IterationOutcome(
                    iteration, selection, tried.child, tuple(failures), result, False, used
                )
            if tried.failure is not None:
                failures.append(tried.failure)
            if tried.stop:
                break
        return IterationOutcome(iteration, selection, None, tuple(failures), result, False, used)

    async def _select(self, index: int, buffer: IterationBuffer, step: IterationStep) -> Selection:
        population = ReadOnlyPopulation(self.scaffold.population)
        selection = await self.scaffold.selection.select(population, step)
        buffer.event("select", attempt=index, **_describe(selection))
        return selection

    async def _attempt(
        self,
        index: int,
        selection: Selection,
        failures: list[Attempt],
        buffer: IterationBuffer,
        llm: LLM,
    ) -> AttemptResult:
        """One attempt: prompt, propose, evaluate, and the child it makes or why it failed."""
        scaffold = self.scaffold
        context = self._prompt_context(buffer.iteration, failures, selection)
        prompt = scaffold.prompt_builder.build(selection, context)
        try:
            proposal = await scaffold.proposer.propose(prompt, selection.parent, llm)
        except LLMError as exc:
            buffer.event("attempt", attempt=index, outcome="llm_error", error=str(exc))
            stop = not scaffold.loop.retry_llm_errors
            return AttemptResult(failure=Attempt(index, "llm", str(exc)), stop=stop)
        except BudgetExhausted as exc:  # ends the iteration like an LLM error, then the run
            buffer.event("attempt", attempt=index, outcome="budget_exhausted", error=str(exc))
            buffer.budget_spent = exc
            return AttemptResult(failure=Attempt(index, "llm", str(exc)), stop=True)
        if not proposal.ok:
            buffer.event(
                "attempt", attempt=index, outcome="proposal_rejected", error=proposal.error
            )
            response = proposal.response[-4000:]
            return AttemptResult(
                failure=Attempt(index, "propose", proposal.error, response=response)
            )
        code = proposal.code or ""
        result, failed = await self._evaluate(code, index, buffer)
        # From scratch (empty population, no parent) the reference applies no failure check:
        # the first evaluated program is admitted whatever its result.
        from_scratch = selection.parent is None and len(scaffold.population) == 0
        if failed and not (from_scratch or scaffold.loop.admit_failed_evaluations):
            return AttemptResult(
                failure=_evaluation_failed(index, code, result, buffer), result=result
            )
        child = self.child_of(selection, proposal, result, buffer.iteration, index)
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
        return AttemptResult(child=child, result=result)

    async def _evaluate(
        self, code: str, index: int, buffer: IterationBuffer
    ) -> tuple[EvalResult, bool]:
        """A candidate's evaluation, recorded, and whether it failed (the failure predicate,
        or a result without the objective)."""
        iteration = buffer.iteration
        pid = program_id(iteration)
        result = await self.scaffold.evaluator.evaluate(code, program_id=pid, iteration=iteration)
        self.evaluations += 1
        self._count_evaluator_fault(result)
        failed = result.status != "ok" or is_failure(result.metrics, result.artifacts)
        if not failed and (missing := self.objective.missing(result.metrics)):
            artifacts = {**result.artifacts, "error": missing}
            result = dataclasses.replace(result, status="invalid", artifacts=artifacts)
            failed = True
        buffer.evaluations.append(EvaluationRow(iteration, index, pid, result, code=code))
        _note_faults(buffer, index, result)
        return result, failed

    def child_of(
        self,
        selection: Selection,
        proposal: Proposal,
        result: EvalResult,
        iteration: int,
        attempt: int,
    ) -> Program:
        """The program an attempt made: its parent and context from ``selection`` (whose tags go
        into its metadata), its code from ``proposal``, its metrics from ``result``."""
        parent = selection.parent
        return Program(
            id=program_id(iteration),
            code=proposal.code or "",
            iteration=iteration,
            metrics=dict(result.metrics),
            score=self.objective.score(result.metrics),
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
                "attempt": attempt,
                # The reference's field names (EvoX strategies may read them).
                "changes": proposal.changes,
                "parent_metrics": dict(parent.metrics) if parent else None,
            },
        )

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

    def _admit(
        self, program: Program, buffer: IterationBuffer, *, can_be_best: bool = True
    ) -> bool:
        self._register(program, buffer)
        admitted = self.scaffold.population.add(program)
        g = self.general
        new_best = (
            admitted
            and can_be_best
            and better(program, self.best, rtol=g.improvement_rtol, atol=g.improvement_atol)
        )
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
        if buffer.iteration not in self._undone:
            self._mark_done([buffer.iteration])
        notes = [Event(buffer.iteration, kind, payload) for kind, payload in self._notes]
        buffer.events[:0] = notes
        self._notes.clear()
        best = self.best
        self._rerun.pop(buffer.iteration, None)
        if self._undone and self._kept is not None:
            kept = self._kept  # a resume restarts from before the iterations without proposal
        else:
            kept = {
                "scaffold": self.scaffold.state_dict(),
                "llm_rng": rng_state(self.llm_rng),
                "model": self.model.state_dict(),
            }
            self._kept = kept
        state = {
            "scaffold": kept["scaffold"],
            "controller": {
                "llm_rng": kept["llm_rng"],
                "meter": self.meter.state_dict(),
                "model": kept["model"],
                "best": best.id if best else None,
                "seed_score": self.seed_score,
                "seed_error": self.seed_error,
                "evaluations": self.evaluations,
                "undone": {
                    str(i): why for i, why in sorted({**self._rerun, **self._undone}.items())
                },
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


def _evaluation_failed(
    index: int, code: str, result: EvalResult, buffer: IterationBuffer
) -> Attempt:
    """The failed attempt an evaluation made (shown to the next attempt's prompt)."""
    buffer.event(
        "attempt",
        attempt=index,
        outcome="evaluation_failed",
        status=result.status,
        failed_stage=result.failed_stage,
        error=result.error[-500:],
    )
    return Attempt(
        index,
        "evaluate",
        result.error or result.status,
        code=code,
        traceback=str(result.artifacts.get("traceback", "")),
        metrics=dict(result.metrics),
    )


def _finished(done: Iterable[asyncio.Task[None]]) -> BudgetExhausted | None:
    """The first spent budget among finished iterations; any other error is raised."""
    done = list(done)
    for task in done:  # several may fail at once (one engine outage): see them all
        if not task.cancelled():
            task.exception()
    spent: BudgetExhausted | None = None
    for task in done:
        try:
            task.result()  # re-raise infrastructure errors
        except BudgetExhausted as exc:
            spent = spent or exc
    return spent


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


def _seed_failure(seed_error: str) -> str:
    """The one line a run stopped by its seed program ends with."""
    if seed_error.startswith("no_objective: "):
        why = seed_error.removeprefix("no_objective: ").removeprefix("the result ")
        return (
            f"the seed program's result {why}; no LLM call was "
            "made. Make the evaluator return combined_score or the card's metric (galapagos "
            "task check shows what it returns)"
        )
    return (
        f"the seed program could not be evaluated ({seed_error}); no LLM call was made. Fix the "
        "task's evaluator or initial program (galapagos task check shows why), or set "
        "general.stop_on_failed_seed: false to search anyway"
    )


def _no_proposal(outcome: IterationOutcome | None, buffer: IterationBuffer) -> str:
    """Why an iteration got no proposal at all ("" if it got one): every attempt ended with an
    LLM error or a refused call, or the budget ran out before its first attempt."""
    if outcome is None:
        return "the budget ran out" if buffer.budget_spent is not None else ""
    if not outcome.attempts or any(a.stage != "llm" for a in outcome.attempts):
        return ""
    last = outcome.attempts[-1].error
    if buffer.budget_spent is not None:
        return "the budget ran out"
    return "LLM: " + _first_line(last)


_FRAME = re.compile(r'File "([^"]+)", line (\d+)')


def evaluator_fault(result: EvalResult) -> str:
    """``"KeyError at evaluator.py line 8: 'evaluator bug'"`` when the task's trusted evaluator
    itself raised (its traceback's deepest frame is not the candidate's program), else ""."""
    error = result.error or ""
    if result.status != "crash" or not error.startswith("the evaluator raised "):
        return ""
    frames = _FRAME.findall(str(result.artifacts.get("traceback", "")))
    if not frames:
        return ""
    path, line = frames[-1]
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    if name.startswith("program."):  # a compat evaluator running the candidate's code
        return ""
    kind, _, message = error.removeprefix("the evaluator raised ").partition(": ")
    return f"{kind} at {name} line {line}: {message[:150]}".rstrip(": ")


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
