"""``evolved_strategy_sampler``: the deployed LLM-written strategy answers ``select``.

The block is the deployed strategy: the fallback chain (active → previous → the built-in seed
strategy, :mod:`.chain`) and where strategy servers run (the run's sandbox sessions, under this
section's limits).  ``select`` makes the chain ready (after a resume: the strategies recreated
and their call logs replayed), feeds the active strategy the members it has not seen, in
iteration order, and awaits its ``sample`` — with the chain's deadline and fallbacks — so it
answers every attempt of an iteration when the loop resamples.

The ``strategy_history`` memory, when the composition has it, drives the rest through this
block: it feeds each admitted child at once, scores strategies and deploys rewrites (its hooks
call :meth:`ready` and :meth:`feed` at the start of an iteration, before ``select``).

State: the chain (active and fallback sources with their call logs, the broken ids, the seed
strategy's order and RNG); servers are recreated and their logs replayed on resume.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.core.block import Step
from harness.core.blocks import block
from harness.core.errors import ConfigError, StrategyError
from harness.core.population import PopulationView
from harness.core.records import Program, Selection
from harness.core.rng import make_rng, rng_from_state, rng_state
from harness.core.selection import BaseSelectionPolicy
from harness.sandbox.sessions import SessionBackend
from scaffolds.evox.chain import StrategyChain
from scaffolds.evox.config import EvolvedSamplerConfig
from scaffolds.evox.factory import (
    LocalStrategyFactory,
    SessionStrategyFactory,
    StrategyFactory,
    remote_strategy,
)
from scaffolds.evox.population import StrategyStore
from scaffolds.evox.records import Labels
from scaffolds.evox.strategies import SEED_ID, RemoteStrategy, SeedStrategy, Strategy

__all__ = ["EvolvedStrategySampler", "strategy_factory"]


def strategy_factory(
    config: EvolvedSamplerConfig, sessions: SessionBackend | None, run_id: str | None
) -> StrategyFactory:
    """Where strategies run: the run's sandbox sessions (``auto``, or the kind they are), or
    host subprocesses when ``sandbox: local`` was asked for explicitly (UNSAFE, warned)."""
    if sessions is None:
        raise ConfigError("EvoX needs the run's sandbox sessions (BuildEnv.sessions)")
    if config.sandbox in ("auto", sessions.kind):
        return SessionStrategyFactory(sessions, image=config.image, run_id=run_id)
    if config.sandbox == "local":
        return LocalStrategyFactory()
    raise ConfigError(
        f"selection_policy.sandbox={config.sandbox} while the run's evaluations use "
        f"evaluator.sandbox={sessions.kind}: strategies run in the sandbox the run's evaluations "
        "use; set evaluator.sandbox: docker (or selection_policy.sandbox: auto)"
    )


@block(
    "evolved_strategy_sampler",
    "The deployed LLM-written strategy's sample(): parent, context and DIVERGE/REFINE label, "
    "host-checked, with the fallback chain.",
)
class EvolvedStrategySampler(BaseSelectionPolicy):
    parallel_ok = False

    def __init__(
        self,
        config: EvolvedSamplerConfig,
        *,
        population: StrategyStore,
        sessions: SessionBackend | None,
        seed: int,
        run_id: str | None,
    ) -> None:
        # Named streams whatever loop.reference_mode says: EvoX's draws are the strategies'.
        super().__init__(make_rng(seed, "selection_policy"))
        self.population = population
        self.k = config.num_context_programs
        self.limits = config.container.limits()
        self.factory = strategy_factory(config, sessions, run_id)
        self.chain = StrategyChain(SeedStrategy(make_rng(seed, "strategy:seed")), Labels("", ""))
        #: The chain as checkpointed, until :meth:`ready` recreates its strategies.
        self._restored: Mapping[str, Any] | None = None
        #: (strategy, its ``known``, how many admitted ids are known to it): see ``unseen``.
        self._checked: tuple[object, object, int] = (None, None, 0)

    def members(self) -> list[Program]:
        return sorted(self.population.programs(), key=lambda p: p.iteration)

    def unseen(self) -> list[Program]:
        """What :meth:`feed` needs to bring the active strategy up to date: every member in
        iteration order when one of them is new to it, else nothing (usually).  Members never
        leave and a strategy's ``known`` only grows, so the ids checked once stay checked."""
        strategy = self.chain.active
        order = self.population.admitted()
        kept = self._checked
        checked = kept[2] if kept[0] is strategy and kept[1] is strategy.known else 0
        known = strategy.known
        while checked < len(order) and order[checked] in known:
            checked += 1
        self._checked = (strategy, known, checked)
        return [] if checked == len(order) else self.members()

    def remote(self, strategy_id: str, source: str, seed: int) -> RemoteStrategy:
        """A (not yet booted) server of a strategy, with the chain's labels."""
        return remote_strategy(
            self.factory, self.limits, self.chain.labels, strategy_id, source, seed
        )

    async def feed(self, programs: Sequence[Program], step: Step) -> None:
        """Add the programs the active strategy has not seen (a failure falls back)."""
        await self.chain.add(programs, self.population, step.iteration, step.event)

    async def select(self, population: PopulationView, step: Step) -> Selection:
        if len(self.population) == 0:
            return Selection(parent=None, info={"reason": "empty population"})
        await self.ready(step)
        await self.feed(self.unseen(), step)
        return await self.chain.select(self.population, self.k, step.iteration, step.event)

    # -- resume ----------------------------------------------------------------------------------
    async def ready(self, step: Step) -> None:
        """Once per process, after a resume: recreate the active and fallback strategies and
        replay their call logs (a strategy that cannot be revived is skipped as broken)."""
        if self._restored is None:
            return
        state, self._restored = self._restored, None
        chain = self.chain
        programs = step.programs()
        revived: dict[str, Strategy] = {SEED_ID: chain.seed}
        for key in ("fallback", "active"):
            desc = state.get(key)
            if not desc or desc["id"] == SEED_ID:
                continue
            strategy = self.remote(desc["id"], desc["source"], int(desc["seed"]))
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
                chain.broken.append(strategy.id)
                await strategy.close()
                continue
            revived[key] = strategy
        fallback = state.get("fallback")
        chain.fallback = revived.get("fallback") or (
            chain.seed if fallback and fallback["id"] == SEED_ID else None
        )
        chain.active = revived.get("active") or chain.fallback or chain.seed
        if chain.active is chain.fallback:
            chain.fallback = None
        step.event("strategy_revived", iteration=-1, **chain.describe())

    def state_dict(self) -> dict[str, Any]:
        chain = self.chain
        fallback = chain.fallback
        return {
            "rng": rng_state(self.rng),
            "chain": {
                "seed": chain.seed.state_dict(),
                "active": chain.active.state_dict() if chain.active is not chain.seed else None,
                "fallback": None
                if fallback is None
                else ({"id": SEED_ID} if fallback is chain.seed else fallback.state_dict()),
                "broken": list(chain.broken),
            },
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        rng_from_state(self.rng, state["rng"])
        if state.get("chain") is not None:
            self.load_chain(state["chain"])

    def load_chain(self, state: Mapping[str, Any]) -> None:
        """Restore the chain as checkpointed; its strategies are recreated by :meth:`ready`."""
        self.chain.seed.load_state_dict(state["seed"])
        self.chain.broken = list(state.get("broken") or [])
        self._restored = state

    async def aclose(self) -> None:
        """Remove every strategy sandbox (called when the run ends, however it ends)."""
        await self.chain.close()
        self.factory.close()
