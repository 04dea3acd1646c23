"""One strategy rewrite: meta-LLM → pre-filter → Valid(·) → deployment with the population.

Up to ``retries`` attempts (the reference's 3); each failed attempt's reason — no code block,
the pre-filter's findings, the first failing Valid(·) check, or a deployment error — goes into
the next attempt's prompt.  An LLM error ends the rewrite at once and keeps the current
strategy (it never reverts anything).  On success the new strategy is already running in its
own sandbox and holds the whole population, migrated in iteration order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from harness.core.errors import InfrastructureFault, LLMError, StrategyError
from harness.core.proposer import LLM
from harness.core.records import Program
from harness.core.rng import derive_seed
from scaffolds.evox.chain import Emit
from scaffolds.evox.client import StrategyClient
from scaffolds.evox.descriptor import describe_change
from scaffolds.evox.factory import ContainerLimits, StrategyFactory, remote_strategy
from scaffolds.evox.guide import gather_insight
from scaffolds.evox.history import StrategyHistory, StrategyRecord
from scaffolds.evox.meta import build_prompt, read_strategy
from scaffolds.evox.prefilter import prefilter
from scaffolds.evox.records import Labels
from scaffolds.evox.strategies import INFRA_RETRIES, RemoteStrategy, report_faults
from scaffolds.evox.valid import ValidConfig

__all__ = ["Rewrite", "StrategyEvolver", "Validator"]


class CheckOutcome(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def status(self) -> str: ...

    @property
    def detail(self) -> str: ...


class ValidationOutcome(Protocol):
    """What the evolver reads of a Valid(·) report (``strategy_tests.ValidationReport``)."""

    @property
    def passed(self) -> bool: ...

    @property
    def failure(self) -> CheckOutcome | None: ...

    @property
    def checks(self) -> Sequence[CheckOutcome]: ...

    def feedback(self) -> str: ...


class Validator(Protocol):
    """Valid(·), injected (``strategy_tests.validate``): it gets a factory of strategy clients
    and the config; neither package imports the other."""

    async def __call__(
        self,
        source: str,
        *,
        clients: Callable[[], StrategyClient],
        labels: Labels,
        config: ValidConfig,
    ) -> ValidationOutcome: ...


SOURCE_CHARS = 20_000


@dataclass(frozen=True)
class Rewrite:
    """What the meta side knows when a switch is due."""

    iteration: int
    task: str
    window: str
    population: str
    programs: Sequence[Program]  # the population in iteration order (migrated as is)
    #: What a guide model may see of the task (description + the evaluator's visible parts).
    task_context: str = ""


class StrategyEvolver:
    def __init__(
        self,
        *,
        factory: StrategyFactory,
        history: StrategyHistory,
        labels: Labels,
        run_seed: int,
        limits: ContainerLimits,
        valid: ValidConfig,
        validate: Validator,
        retries: int = 3,
        use_prefilter: bool = True,
        use_insight: bool = True,
    ) -> None:
        self.factory = factory
        self.history = history
        self.labels = labels
        self.run_seed = run_seed
        self.limits = limits
        self.valid = valid
        self.validate = validate
        self.retries = retries
        self.use_prefilter = use_prefilter
        self.use_insight = use_insight
        #: Candidates generated so far (names them: s1, s2, …); checkpointed by the scaffold.
        self.generated = 0
        #: Guide-model problem summaries by input hash; checkpointed by the scaffold.
        self.summaries: dict[str, str] = {}

    def remote(self, strategy_id: str, source: str, seed: int) -> RemoteStrategy:
        """A (not yet booted) strategy server that survives infrastructure faults."""
        return remote_strategy(self.factory, self.limits, self.labels, strategy_id, source, seed)

    def strategy_seed(self, strategy_id: str) -> int:
        return derive_seed(self.run_seed, f"strategy:{strategy_id}") % (1 << 31)

    async def rewrite(
        self, job: Rewrite, llm: LLM, emit: Emit
    ) -> tuple[RemoteStrategy, str] | None:
        """A deployed new strategy and the id of the one it was rewritten from, or None."""
        parent = self.history.best()
        if parent is None:
            return None
        others = self.history.context(parent)
        insight = await gather_insight(
            llm,
            stats=job.population,
            task_context=job.task_context or job.task,
            others=others,
            changes={r.id: describe_change(r.start_state, r.end_state) for r in others},
            summaries=self.summaries,
            use_llm=self.use_insight,
        )
        emit(
            "strategy_insight",
            iteration=job.iteration,
            generated=list(insight.generated),
            errors=list(insight.errors),
        )
        failures: list[str] = []
        for attempt in range(self.retries):
            prompt = build_prompt(
                parent=parent,
                others=others,
                task=job.task,
                window=job.window,
                population=insight.population,
                failures=failures,
                problem_summary=insight.problem,
                outcomes=insight.outcomes,
                population_is_insight="population" in insight.generated,
            )
            try:
                call = await llm.generate(prompt, purpose="strategy")
            except LLMError as exc:
                emit(
                    "strategy_generation_failed",
                    iteration=job.iteration,
                    reason="llm_error",
                    error=str(exc)[:500],
                    attempts=attempt,
                )
                return None
            self.generated += 1
            sid = f"s{self.generated}"
            source = read_strategy(call.text)
            reason = await self._vet(sid, source, attempt, job.iteration, emit)
            if reason is None and source is not None:
                deployed = await self._deploy(sid, source, job, attempt, emit)
                if isinstance(deployed, RemoteStrategy):
                    return deployed, parent.id
                reason = deployed
            failures.append(reason or "")
        emit(
            "strategy_generation_failed",
            iteration=job.iteration,
            reason="attempts_exhausted",
            attempts=self.retries,
        )
        return None

    async def _vet(
        self, sid: str, source: str | None, attempt: int, iteration: int, emit: Emit
    ) -> str | None:
        """None when the candidate passes the pre-filter and Valid(·); else the reason."""
        if source is None:
            emit(
                "strategy_candidate",
                iteration=iteration,
                candidate=sid,
                attempt=attempt,
                verdict="no_code",
            )
            return "The answer had no fenced ```python code block with the module."
        if self.use_prefilter:
            verdict = prefilter(source)
            if not verdict.ok:
                emit(
                    "strategy_candidate",
                    iteration=iteration,
                    candidate=sid,
                    attempt=attempt,
                    verdict="prefilter",
                    reason=verdict.reason()[:2000],
                    source=source[:SOURCE_CHARS],
                )
                return verdict.reason()
        report = await self._validate(source, iteration, emit)
        failed = report.failure
        emit(
            "strategy_validation",
            iteration=iteration,
            candidate=sid,
            attempt=attempt,
            passed=report.passed,
            checks={c.name: c.status for c in report.checks},
            failed_check=failed.name if failed else None,
            detail=failed.detail[:1000] if failed else "",
            source=source[:SOURCE_CHARS],
        )
        return None if report.passed else report.feedback()

    async def _validate(self, source: str, iteration: int, emit: Emit) -> ValidationOutcome:
        """Valid(·), run again from the start after an infrastructure fault (an engine restart
        is not the candidate's failure)."""
        for attempt in range(INFRA_RETRIES + 1):
            try:
                return await self.validate(
                    source,
                    clients=lambda: self.factory.client(self.valid.limits),
                    labels=self.labels,
                    config=self.valid,
                )
            except InfrastructureFault as exc:
                if attempt == INFRA_RETRIES:
                    raise
                emit(
                    "strategy_infrastructure_retry",
                    iteration=iteration,
                    op="validate",
                    fault=str(exc)[:300],
                )
                await asyncio.to_thread(self.factory.recover, str(exc))
        raise AssertionError("unreachable")

    async def _deploy(
        self, sid: str, source: str, job: Rewrite, attempt: int, emit: Emit
    ) -> RemoteStrategy | str:
        strategy = self.remote(sid, source, self.strategy_seed(sid))
        try:
            await strategy.boot()
            await strategy.add(list(job.programs))
            report_faults(strategy, emit, job.iteration, "deploy")
        except StrategyError as exc:
            await strategy.close()
            emit(
                "strategy_candidate",
                iteration=job.iteration,
                candidate=sid,
                attempt=attempt,
                verdict="deploy_failed",
                error_kind=exc.kind,
                reason=str(exc)[:1000],
            )
            return f"The strategy passed validation but failed when deployed: {exc}"
        emit(
            "strategy_deployed",
            iteration=job.iteration,
            candidate=sid,
            attempt=attempt,
            migrated=len(job.programs),
        )
        return strategy

    def record(
        self, strategy: RemoteStrategy, parent_id: str, iteration: int, state: str
    ) -> StrategyRecord:
        return StrategyRecord(
            id=strategy.id,
            source=strategy.source,
            parent_id=parent_id,
            deployed_iteration=iteration,
            start_state=state,
        )
