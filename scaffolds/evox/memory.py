"""``strategy_history``: EvoX's memory — the strategy history, the fallback chain of deployed
strategies, the scoring window and the stagnation trigger (SkyDiscover port).

Hooks (see :mod:`harness.core.block`):

- at iteration 0 (``start_iteration``), once per run: the guide model writes problem-specific
  examples into the DIVERGE/REFINE texts (``memory.auto_generate_variation_operators``); the
  generic texts when it fails; the result is an event and part of the state, never regenerated
  on resume.

- ``start_iteration``: once per process the chain is made ready (after a resume the active and
  fallback strategies are recreated and their call logs replayed; on a fresh run the window of
  the seed strategy opens at the seed's score); then the active strategy is fed any member it
  has not seen, in iteration order.  The selection block (``evolved_strategy_sampler``) then
  asks the chain for this iteration's parent and context.
- ``end_iteration``: the admitted child is ``add``-ed to the active strategy; the best score is
  recorded in the scoring window; the stagnation counter steps (not after the last iteration);
  when it fires, the pending strategy is scored into the history — the seed strategy on the
  first trigger — and the meta-LLM rewrites the argmax-J strategy.  After the last iteration
  the pending strategy is scored and the strategy sandboxes are closed.

State (``state_dict``): the history's records and RNG, the chain (active and fallback sources
with their call logs, the seed's order and RNG), the pending record, the scoring window, the
stagnation counter and the candidate counter; containers are recreated and logs replayed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from harness.core.block import Step
from harness.core.errors import StrategyError
from harness.core.memory import BaseMemory
from harness.core.population import BasePopulation
from harness.core.records import IterationOutcome, Program
from harness.evox.chain import StrategyChain
from harness.evox.descriptor import describe_population, describe_window
from harness.evox.evolver import Rewrite, StrategyEvolver
from harness.evox.guide import generate_operators
from harness.evox.history import StrategyHistory, StrategyRecord
from harness.evox.records import Labels
from harness.evox.scoring import Stagnation, WindowScorer
from harness.evox.seed import seed_source
from harness.evox.strategies import SEED_ID, Strategy

__all__ = ["EvoxMemory", "EvoxState"]


@dataclass
class EvoxState:
    """Everything besides the history that EvoX keeps between iterations."""

    chain: StrategyChain
    evolver: StrategyEvolver
    interval: int
    threshold: float
    task: str
    #: What the guide model may see of the task (description + visible evaluator parts).
    task_context: str = ""
    #: Ask the guide model for problem-specific DIVERGE/REFINE examples at run start.
    generate_operators: bool = False
    #: Where the label texts came from: ``generated``, ``default``, or "" (not decided yet).
    operators: str = ""
    scorer: WindowScorer = field(default_factory=WindowScorer)
    pending: StrategyRecord | None = None
    failures: int = 0
    ready: bool = False
    restored: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        self.stagnation = Stagnation(self.interval, self.threshold)


class EvoxMemory(BaseMemory):
    parallel_ok = False

    def __init__(
        self, history: StrategyHistory, state: EvoxState, population: BasePopulation
    ) -> None:
        self.history = history
        self.state = state
        self.population = population

    @property
    def chain(self) -> StrategyChain:
        return self.state.chain

    def _members(self) -> list[Program]:
        return sorted(self.population.programs(), key=lambda p: p.iteration)

    def _best(self) -> float:
        best = self.population.best()
        return best.score if best is not None else 0.0

    # -- hooks -------------------------------------------------------------------------------
    async def start_iteration(self, step: Step) -> None:
        if step.iteration == 0:
            await self._operators(step)
            return
        await self._ready(step)
        if len(self.population) == 0:
            return
        # Members the strategy has not seen yet (the seed program of iteration 0, or after a
        # resume) go in first, in iteration order.
        await self.chain.add(self._members(), self.population, step.iteration, step.event)
        self.drop_broken_pending(step)

    async def end_iteration(self, step: Step, outcome: IterationOutcome) -> None:
        iteration = step.iteration
        if iteration == 0:
            return
        st = self.state
        if outcome.admitted and outcome.child is not None:
            await st.chain.add([outcome.child], self.population, iteration, step.event)
            self.drop_broken_pending(step)
        best = self._best()
        st.scorer.record_step(best)
        if iteration < step.max_iterations and st.stagnation.step(best):
            await self._evolve(step)
        if iteration >= step.max_iterations:
            self._finalize(step)
            await st.chain.close()

    async def _operators(self, step: Step) -> None:
        """Once per run: the guide model's DIVERGE/REFINE texts (kept on resume)."""
        st = self.state
        if st.operators:
            return
        generic = st.chain.labels
        if st.generate_operators:
            outcome = await generate_operators(step.llm, st.task_context, generic)
            labels, st.operators, error = outcome.labels, outcome.source, outcome.error
        else:
            labels, st.operators, error = generic, "default", "disabled"
        self._use_labels(labels)
        step.event(
            "variation_operators",
            source=st.operators,
            error=error,
            diverge=labels.diverge,
            refine=labels.refine,
        )

    def _use_labels(self, labels: Labels) -> None:
        self.state.chain.labels = labels
        self.state.evolver.labels = labels

    # -- strategy lifecycle ----------------------------------------------------------------------
    async def _ready(self, step: Step) -> None:
        st = self.state
        if st.ready:
            return
        st.ready = True
        if st.restored is not None:
            await self._revive(st.restored, step)
            st.restored = None
        elif st.scorer.start_score is None:
            st.scorer.reset(self._best())  # the window of the seed strategy opens at run start

    def drop_broken_pending(self, step: Step) -> None:
        """Forget the pending record of a strategy that failed at run time (never scored)."""
        st = self.state
        if st.pending is not None and st.pending.id in st.chain.broken:
            step.event(
                "strategy_unscored",
                iteration=step.iteration,
                strategy=st.pending.id,
                reason="failed at run time; never scored",
            )
            st.pending = None

    def _finalize(self, step: Step) -> None:
        st = self.state
        if st.pending is None:
            return
        record, st.pending = st.pending, None
        record.metrics = st.scorer.metrics(st.interval, current_best=self._best())
        record.finalized_iteration = step.iteration
        record.end_state = describe_population(self._members(), threshold=st.threshold)
        self.history.add(record)
        step.event(
            "strategy_scored",
            iteration=step.iteration,
            strategy=record.id,
            J=record.metrics["combined_score"],
            metrics=record.metrics,
        )

    async def _evolve(self, step: Step) -> None:
        st = self.state
        iteration = step.iteration
        step.event(
            "strategy_trigger",
            iteration=iteration,
            interval=st.interval,
            best=self._best(),
            active=st.chain.active.id,
        )
        if len(self.history) == 0:
            st.pending = StrategyRecord(SEED_ID, seed_source(), deployed_iteration=0)
        self._finalize(step)
        st.scorer.reset(self._best())
        state = describe_population(self._members(), threshold=st.threshold)
        job = Rewrite(
            iteration=iteration,
            task=st.task,
            task_context=st.task_context,
            population=state,
            programs=self._members(),
            window=describe_window(
                start=iteration + 1,
                total=step.max_iterations,
                horizon=st.interval,
                threshold=st.threshold,
            ),
        )
        result = await st.evolver.rewrite(job, step.llm, step.event)
        if result is None:
            st.failures += 1
            return
        strategy, parent_id = result
        await st.chain.switch(strategy, iteration, step.event)
        st.pending = st.evolver.record(strategy, parent_id, iteration, state)
        st.scorer.reset(self._best(), start_iteration=iteration)

    # -- resume ----------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        st = self.state
        chain = st.chain
        return {
            **self.history.state_dict(),
            "evox": {
                "seed": chain.seed.state_dict(),
                "active": chain.active.state_dict() if chain.active is not chain.seed else None,
                "fallback": None
                if chain.fallback is None
                else (
                    {"id": SEED_ID} if chain.fallback is chain.seed else chain.fallback.state_dict()
                ),
                "broken": list(chain.broken),
                "pending": asdict(st.pending) if st.pending else None,
                "scorer": st.scorer.state_dict(),
                "stagnation": st.stagnation.state_dict(),
                "generated": st.evolver.generated,
                "failures": st.failures,
                "operators": st.operators,
                "labels": st.chain.labels.as_dict(),
                "summaries": dict(st.evolver.summaries),
            },
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.history.load_state_dict(state)
        extra = state["evox"]
        st = self.state
        st.chain.seed.load_state_dict(extra["seed"])
        st.chain.broken = list(extra.get("broken") or [])
        st.pending = StrategyRecord(**extra["pending"]) if extra.get("pending") else None
        st.scorer.load_state_dict(extra["scorer"])
        st.stagnation.load_state_dict(extra["stagnation"])
        st.evolver.generated = int(extra.get("generated", 0))
        st.failures = int(extra.get("failures", 0))
        st.operators = str(extra.get("operators") or "")
        if extra.get("labels") is not None:
            self._use_labels(Labels(**extra["labels"]))
        st.evolver.summaries = dict(extra.get("summaries") or {})
        st.restored, st.ready = extra, False

    async def _revive(self, state: Mapping[str, Any], step: Step) -> None:
        """Recreate the active and fallback strategies and replay their call logs."""
        st = self.state
        programs = step.programs()
        revived: dict[str, Strategy] = {SEED_ID: st.chain.seed}
        for key in ("fallback", "active"):
            desc = state.get(key)
            if not desc or desc["id"] == SEED_ID:
                continue
            strategy = st.evolver.remote(desc["id"], desc["source"], int(desc["seed"]))
            try:
                await strategy.boot()
                await strategy.replay(desc["log"], programs)
            except StrategyError as exc:
                step.event(
                    "strategy_failure",
                    iteration=-1,
                    strategy=strategy.id,
                    op="revive",
                    error_kind=exc.kind,
                    error=str(exc)[:1000],
                )
                st.chain.broken.append(strategy.id)
                await strategy.close()
                continue
            revived[key] = strategy
        fallback = state.get("fallback")
        st.chain.fallback = revived.get("fallback") or (
            st.chain.seed if fallback and fallback["id"] == SEED_ID else None
        )
        st.chain.active = revived.get("active") or st.chain.fallback or st.chain.seed
        if st.chain.active is st.chain.fallback:
            st.chain.fallback = None
        step.event("strategy_revived", iteration=-1, **st.chain.describe())

    async def aclose(self) -> None:
        """Remove every strategy sandbox (called when the run ends, however it ends)."""
        st = self.state
        await st.chain.close()
        st.evolver.factory.close()
