"""``EvoxScaffold``: solutions every iteration, the strategy on stagnation (SkyDiscover port).

Per iteration (hooks around the one controller loop):

- ``start_iteration``: the active strategy is fed any member it has not seen, then asked for a
  parent and context (``sample``); a failure goes through the fallback chain, which retries the
  same iteration with the restored strategy.
- ``end_iteration``: the admitted child is ``add``-ed to the active strategy; the best score is
  recorded in the scoring window; the stagnation counter steps (not after the last iteration);
  when it fires, the pending strategy is scored into the history — the seed strategy on the
  first trigger — and the meta-LLM rewrites the argmax-J strategy.  After the last iteration
  the pending strategy is scored and the strategy sandboxes are closed.

State for resume (``extra_state``): the chain (active and fallback sources with their call
logs, the seed's order and RNG), the pending record, the scoring window, the stagnation
counter and the candidate counter; containers are recreated and their logs replayed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from harness.core.errors import StrategyError
from harness.core.records import IterationOutcome, Program, Selection
from harness.core.scaffold import HookContext, Scaffold
from harness.evox.chain import StrategyChain
from harness.evox.descriptor import describe_population, describe_window
from harness.evox.evolver import Rewrite, StrategyEvolver
from harness.evox.history import StrategyHistory, StrategyRecord
from harness.evox.scoring import Stagnation, WindowScorer
from harness.evox.strategies import SEED_ID, RemoteStrategy, Strategy
from harness.sandbox import _runtime
from scaffolds.evox.policy import EvolvedStrategySampler

__all__ = ["EvoxScaffold", "EvoxState", "seed_source"]


def seed_source() -> str:
    return (_runtime.RUNTIME_DIR / "galapagos_strategy" / "seed_strategy.py").read_text()


@dataclass
class EvoxState:
    """Everything besides the components that EvoX keeps between iterations."""

    chain: StrategyChain
    evolver: StrategyEvolver
    interval: int
    threshold: float
    k: int
    task: str
    scorer: WindowScorer = field(default_factory=WindowScorer)
    pending: StrategyRecord | None = None
    failures: int = 0
    ready: bool = False
    restored: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        self.stagnation = Stagnation(self.interval, self.threshold)


@dataclass
class EvoxScaffold(Scaffold):
    evox: EvoxState | None = None
    parallel_ok: bool = False

    @property
    def state(self) -> EvoxState:
        assert self.evox is not None
        return self.evox

    @property
    def history(self) -> StrategyHistory:
        assert isinstance(self.memory, StrategyHistory)
        return self.memory

    def _members(self) -> list[Program]:
        return sorted(self.population.programs(), key=lambda p: p.iteration)

    def _best(self) -> float:
        best = self.population.best()
        return best.score if best is not None else 0.0

    # -- hooks -------------------------------------------------------------------------------
    async def start_iteration(self, iteration: int, ctx: HookContext) -> None:
        st = self.state
        await self._ready(ctx)
        assert isinstance(self.selection, EvolvedStrategySampler)
        if len(self.population) == 0:
            self.selection.prepare(Selection(parent=None, info={"reason": "empty population"}))
            return
        # Members the strategy has not seen yet (the seed program of iteration 0, or after a
        # resume) go in first, in iteration order.
        await st.chain.add(self._members(), self.population, iteration, ctx.event)
        selection = await st.chain.select(self.population, st.k, iteration, ctx.event)
        self._drop_broken_pending(ctx, iteration)
        self.selection.prepare(selection)

    async def end_iteration(
        self, iteration: int, outcome: IterationOutcome, ctx: HookContext
    ) -> None:
        st = self.state
        if outcome.admitted and outcome.child is not None:
            await st.chain.add([outcome.child], self.population, iteration, ctx.event)
            self._drop_broken_pending(ctx, iteration)
        best = self._best()
        st.scorer.record_step(best)
        if iteration < ctx.max_iterations and st.stagnation.step(best):
            await self._evolve(iteration, ctx)
        if iteration >= ctx.max_iterations:
            self._finalize(iteration, ctx)
            await st.chain.close()

    # -- strategy lifecycle ----------------------------------------------------------------------
    async def _ready(self, ctx: HookContext) -> None:
        st = self.state
        if st.ready:
            return
        st.ready = True
        if st.restored is not None:
            await self._revive(st.restored, ctx)
            st.restored = None
        elif st.scorer.start_score is None:
            st.scorer.reset(self._best())  # the window of the seed strategy opens at run start

    def _drop_broken_pending(self, ctx: HookContext, iteration: int) -> None:
        st = self.state
        if st.pending is not None and st.pending.id in st.chain.broken:
            ctx.event(
                "strategy_unscored",
                iteration=iteration,
                strategy=st.pending.id,
                reason="failed at run time; never scored",
            )
            st.pending = None

    def _finalize(self, iteration: int, ctx: HookContext) -> None:
        st = self.state
        if st.pending is None:
            return
        record, st.pending = st.pending, None
        record.metrics = st.scorer.metrics(st.interval, current_best=self._best())
        record.finalized_iteration = iteration
        record.end_state = describe_population(self._members(), threshold=st.threshold)
        self.history.add(record)
        ctx.event(
            "strategy_scored",
            iteration=iteration,
            strategy=record.id,
            J=record.metrics["combined_score"],
            metrics=record.metrics,
        )

    async def _evolve(self, iteration: int, ctx: HookContext) -> None:
        st = self.state
        ctx.event(
            "strategy_trigger",
            iteration=iteration,
            interval=st.interval,
            best=self._best(),
            active=st.chain.active.id,
        )
        if len(self.history) == 0:
            st.pending = StrategyRecord(SEED_ID, seed_source(), deployed_iteration=0)
        self._finalize(iteration, ctx)
        st.scorer.reset(self._best())
        state = describe_population(self._members(), threshold=st.threshold)
        job = Rewrite(
            iteration=iteration,
            task=st.task,
            population=state,
            programs=self._members(),
            window=describe_window(
                start=iteration + 1,
                total=ctx.max_iterations,
                horizon=st.interval,
                threshold=st.threshold,
            ),
        )
        result = await st.evolver.rewrite(job, ctx.llm, ctx.event)
        if result is None:
            st.failures += 1
            return
        strategy, parent_id = result
        await st.chain.switch(strategy, iteration, ctx.event)
        st.pending = st.evolver.record(strategy, parent_id, iteration, state)
        st.scorer.reset(self._best(), start_iteration=iteration)

    # -- resume ----------------------------------------------------------------------------------
    def extra_state(self) -> dict[str, Any]:
        st = self.state
        chain = st.chain
        return {
            "seed": chain.seed.state_dict(),
            "active": chain.active.state_dict() if chain.active is not chain.seed else None,
            "fallback": None
            if chain.fallback is None
            else ({"id": SEED_ID} if chain.fallback is chain.seed else chain.fallback.state_dict()),
            "broken": list(chain.broken),
            "pending": asdict(st.pending) if st.pending else None,
            "scorer": st.scorer.state_dict(),
            "stagnation": st.stagnation.state_dict(),
            "generated": st.evolver.generated,
            "failures": st.failures,
        }

    def load_extra_state(self, state: Mapping[str, Any]) -> None:
        st = self.state
        st.chain.seed.load_state_dict(state["seed"])
        st.chain.broken = list(state.get("broken") or [])
        st.pending = StrategyRecord(**state["pending"]) if state.get("pending") else None
        st.scorer.load_state_dict(state["scorer"])
        st.stagnation.load_state_dict(state["stagnation"])
        st.evolver.generated = int(state.get("generated", 0))
        st.failures = int(state.get("failures", 0))
        st.restored, st.ready = state, False

    async def _revive(self, state: Mapping[str, Any], ctx: HookContext) -> None:
        """Recreate the active and fallback strategies and replay their call logs."""
        st = self.state
        programs = ctx.programs()
        revived: dict[str, Strategy] = {SEED_ID: st.chain.seed}
        for key in ("fallback", "active"):
            desc = state.get(key)
            if not desc or desc["id"] == SEED_ID:
                continue
            strategy = RemoteStrategy(
                desc["id"],
                desc["source"],
                st.evolver.factory.client(st.evolver.limits),
                labels=st.chain.labels,
                seed=int(desc["seed"]),
                bulk_deadline_s=st.evolver.limits.bulk_s,
            )
            try:
                await strategy.boot()
                await strategy.replay(desc["log"], programs)
            except StrategyError as exc:
                ctx.event(
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
        ctx.event("strategy_revived", iteration=-1, **st.chain.describe())

    async def aclose(self) -> None:
        """Remove every strategy sandbox (call when the run ends, however it ends)."""
        st = self.state
        await st.chain.close()
        st.evolver.factory.close()
