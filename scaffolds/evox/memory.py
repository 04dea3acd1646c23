"""``strategy_history``: EvoX's memory — the strategy history, the fallback chain of deployed
strategies, the scoring window and the stagnation trigger (SkyDiscover port).

Hooks (see :mod:`harness.core.block`):

- at iteration 0 (``start_iteration``), once per run: the guide model writes problem-specific
  examples into the DIVERGE/REFINE texts (``memory.auto_generate_variation_operators``); the
  generic texts when it fails; the result is an event and part of the state, never regenerated
  on resume.

- ``start_iteration``: once per process the deployed strategy (the ``evolved_strategy_sampler``
  this memory gets) is made ready (after a resume its strategies are recreated and their call
  logs replayed; on a fresh run the window of the seed strategy opens at the seed's score);
  then the active strategy is fed any member it has not seen, in iteration order.  The
  sampler's ``select`` then asks the chain for this iteration's parent and context.
- ``end_iteration``: a pending strategy that failed at run time (in ``select``) is dropped,
  never scored; the admitted child is ``add``-ed to the active strategy; the best score is
  recorded in the scoring window; the stagnation counter steps (not after the last iteration);
  when it fires, the pending strategy is scored into the history — the seed strategy on the
  first trigger — and the meta-LLM rewrites the argmax-J strategy, which the sampler's chain
  then deploys.  After the last iteration the pending strategy is scored and the strategy
  sandboxes are closed.

State (``state_dict``): the history's records and RNG, the pending record, the scoring window,
the stagnation counter, the candidate counter and the label texts (the chain is the sampler's
state).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from harness.core.block import Step
from harness.core.blocks import block
from harness.core.config import GeneralConfig
from harness.core.memory import BaseMemory
from harness.core.records import IterationOutcome, Program, TaskInfo
from harness.core.rng import make_rng
from scaffolds.evox.chain import StrategyChain
from scaffolds.evox.config import StrategyHistoryConfig
from scaffolds.evox.descriptor import describe_population, describe_window
from scaffolds.evox.evolver import Rewrite, StrategyEvolver
from scaffolds.evox.guide import generate_operators
from scaffolds.evox.history import StrategyHistory, StrategyRecord
from scaffolds.evox.labels import DEFAULT_DIVERGE, DEFAULT_REFINE
from scaffolds.evox.policy import EvolvedStrategySampler
from scaffolds.evox.population import StrategyStore
from scaffolds.evox.records import Labels
from scaffolds.evox.scoring import Stagnation, WindowScorer, switch_interval
from scaffolds.evox.seed import seed_source
from scaffolds.evox.strategies import SEED_ID
from strategy_tests import validate

__all__ = ["EvoxMemory", "EvoxState"]


@dataclass
class EvoxState:
    """Everything besides the history and the chain that EvoX keeps between iterations."""

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
    restored: bool = False

    def __post_init__(self) -> None:
        self.stagnation = Stagnation(self.interval, self.threshold)


def labels_of(config: StrategyHistoryConfig) -> Labels:
    """The DIVERGE/REFINE texts the config asks for (none with ``use_labels: false``)."""
    if not config.use_labels:
        return Labels("", "")
    return Labels(config.diverge_label or DEFAULT_DIVERGE, config.refine_label or DEFAULT_REFINE)


@block(
    "strategy_history",
    "EvoX's strategy history: J-scored strategies, the fallback chain, the stagnation trigger "
    "and meta-LLM rewrites gated by the pre-filter and Valid(.).",
)
class EvoxMemory(BaseMemory):
    parallel_ok = False

    def __init__(
        self,
        config: StrategyHistoryConfig,
        *,
        population: StrategyStore,
        selection_policy: EvolvedStrategySampler,
        task: TaskInfo,
        general: GeneralConfig,
        seed: int,
    ) -> None:
        self.population = population
        self.sampler = selection_policy
        labels = labels_of(config)
        selection_policy.chain.labels = labels
        self.history = StrategyHistory(make_rng(seed, "memory"), context_size=config.meta_context)
        evolver = StrategyEvolver(
            factory=selection_policy.factory,
            history=self.history,
            labels=labels,
            run_seed=seed,
            limits=selection_policy.limits,
            valid=config.validation.config(seed=seed),
            validate=validate,
            retries=config.generation_retries,
            use_prefilter=config.prefilter,
            use_insight=config.use_llm_stats_insight,
        )
        self.state = EvoxState(
            evolver=evolver,
            interval=switch_interval(general.max_iterations, config.switch_interval),
            threshold=config.improvement_threshold,
            task=task.description,
            task_context=task.model_context or task.description,
            generate_operators=config.use_labels and config.auto_generate_variation_operators,
        )

    @property
    def chain(self) -> StrategyChain:
        return self.sampler.chain

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
        await self.sampler.feed(self.sampler.unseen(), step)
        self.drop_broken_pending(step)

    async def end_iteration(self, step: Step, outcome: IterationOutcome) -> None:
        iteration = step.iteration
        if iteration == 0:
            return
        st = self.state
        self.drop_broken_pending(step)  # a strategy that failed in this iteration's select
        if outcome.admitted and outcome.child is not None:
            await self.sampler.feed([outcome.child], step)
            self.drop_broken_pending(step)
        best = self._best()
        st.scorer.record_step(best)
        if iteration < step.max_iterations and st.stagnation.step(best):
            await self._evolve(step)
        if iteration >= step.max_iterations:
            self._finalize(step)
            await self.chain.close()

    async def _operators(self, step: Step) -> None:
        """Once per run: the guide model's DIVERGE/REFINE texts (kept on resume)."""
        st = self.state
        if st.operators:
            return
        generic = self.chain.labels
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
        self.chain.labels = labels
        self.state.evolver.labels = labels

    # -- strategy lifecycle ----------------------------------------------------------------------
    async def _ready(self, step: Step) -> None:
        st = self.state
        if st.ready:
            return
        st.ready = True
        await self.sampler.ready(step)
        if st.restored:
            st.restored = False
        elif st.scorer.start_score is None:
            st.scorer.reset(self._best())  # the window of the seed strategy opens at run start

    def drop_broken_pending(self, step: Step) -> None:
        """Forget the pending record of a strategy that failed at run time (never scored)."""
        st = self.state
        if st.pending is not None and st.pending.id in self.chain.broken:
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
            active=self.chain.active.id,
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
        await self.chain.switch(strategy, iteration, step.event)
        st.pending = st.evolver.record(strategy, parent_id, iteration, state)
        st.scorer.reset(self._best(), start_iteration=iteration)

    # -- resume ----------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        st = self.state
        return {
            **self.history.state_dict(),
            "evox": {
                "pending": asdict(st.pending) if st.pending else None,
                "scorer": st.scorer.state_dict(),
                "stagnation": st.stagnation.state_dict(),
                "generated": st.evolver.generated,
                "failures": st.failures,
                "operators": st.operators,
                "labels": self.chain.labels.as_dict(),
                "summaries": dict(st.evolver.summaries),
            },
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.history.load_state_dict(state)
        extra = state["evox"]
        st = self.state
        if "seed" in extra:  # a checkpoint from before the chain was the sampler's state
            self.sampler.load_chain(extra)
        st.pending = StrategyRecord(**extra["pending"]) if extra.get("pending") else None
        st.scorer.load_state_dict(extra["scorer"])
        st.stagnation.load_state_dict(extra["stagnation"])
        st.evolver.generated = int(extra.get("generated", 0))
        st.failures = int(extra.get("failures", 0))
        st.operators = str(extra.get("operators") or "")
        if extra.get("labels") is not None:
            self._use_labels(Labels(**extra["labels"]))
        st.evolver.summaries = dict(extra.get("summaries") or {})
        st.restored, st.ready = True, False
