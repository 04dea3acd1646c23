"""The fallback chain: active strategy → previous strategy → built-in seed strategy.

Every runtime failure of the active strategy (it raised, timed out, was OOM-killed, crashed,
broke the protocol, or gave an answer the host rejects) is handled here, never by the loop:

1. a ``strategy_failure`` event records what happened;
2. the previous strategy (if there is one) is restored — every population member it has not
   seen is re-added in iteration order — else the seed strategy is; a fallback that fails
   while being restored is skipped for the next one (``strategy_failure`` again);
3. a ``strategy_restore`` event names the broken and the restored strategy; the broken one is
   closed and remembered in ``broken`` (so the caller never scores it);
4. for a failed ``sample`` the same iteration's selection is retried with the restored strategy
   (``strategy_retry``).  For a failed ``add`` nothing needs retrying: the host already holds the
   child, and the restored strategy receives it with the other missing programs.

Only :class:`~harness.core.errors.StrategyError` triggers this; an LLM error anywhere (solution
or meta side) never touches a healthy strategy — the reference's bug of reverting on any
prompt-less iteration error has no path here — and neither does an infrastructure fault (an
engine restart): the strategy restarts its own server and replays its calls
(``strategy_infrastructure_retry``), with no fallback and no charge.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from harness.core.errors import StrategyError
from harness.core.population import PopulationView
from harness.core.records import Program, Selection
from scaffolds.evox.records import Labels, resolve
from scaffolds.evox.strategies import SeedStrategy, Strategy, report_faults

__all__ = ["Emit", "StrategyChain"]

Emit = Callable[..., None]


def _in_order(population: PopulationView) -> list[Program]:
    return sorted(population.programs(), key=lambda p: p.iteration)


class StrategyChain:
    def __init__(self, seed: SeedStrategy, labels: Labels) -> None:
        self.seed = seed
        self.labels = labels
        self.active: Strategy = seed
        self.fallback: Strategy | None = None
        self.broken: list[str] = []

    # -- the two runtime calls -----------------------------------------------------------------
    async def select(
        self, population: PopulationView, k: int, iteration: int, emit: Emit
    ) -> Selection:
        """The active strategy's choice for ``iteration``, falling back as often as needed."""
        while True:
            strategy = self.active
            try:
                answer = await strategy.sample(k)
                report_faults(strategy, emit, iteration, "sample")
                return resolve(
                    answer,
                    population=population,
                    known=strategy.known,
                    k=k,
                    labels=self.labels,
                    info={"strategy": strategy.id},
                )
            except StrategyError as exc:
                if strategy is self.seed:
                    raise  # trusted code failing is a bug in Galapagos, not a strategy failure
                self._failed(emit, strategy, "sample", exc, iteration)
                await self._restore(population, iteration, emit)
                emit("strategy_retry", iteration=iteration, op="sample", strategy=self.active.id)

    async def add(
        self, programs: Sequence[Program], population: PopulationView, iteration: int, emit: Emit
    ) -> None:
        """Feed programs to the active strategy (a failure restores the previous one, which then
        receives these and every other program it is missing)."""
        strategy = self.active
        fresh = [p for p in programs if p.id not in strategy.known]
        if not fresh:
            return
        try:
            await strategy.add(fresh)
            report_faults(strategy, emit, iteration, "add")
        except StrategyError as exc:
            if strategy is self.seed:
                raise
            self._failed(emit, strategy, "add", exc, iteration)
            await self._restore(population, iteration, emit)

    # -- switching and restoring ---------------------------------------------------------------
    async def switch(self, new: Strategy, iteration: int, emit: Emit) -> None:
        """Make ``new`` (already fed the whole population) active; the old one becomes the
        fallback and the fallback before it is closed (the seed is never closed)."""
        old_fallback = self.fallback
        self.fallback, self.active = self.active, new
        if old_fallback is not None and old_fallback is not self.seed:
            await old_fallback.close()
        emit(
            "strategy_switch",
            iteration=iteration,
            active=new.id,
            fallback=self.fallback.id if self.fallback else None,
        )

    def _failed(
        self, emit: Emit, strategy: Strategy, op: str, exc: StrategyError, iteration: int
    ) -> None:
        emit(
            "strategy_failure",
            iteration=iteration,
            strategy=strategy.id,
            op=op,
            error_kind=exc.kind,
            error=str(exc)[:1000],
        )

    async def _restore(self, population: PopulationView, iteration: int, emit: Emit) -> None:
        broken = self.active
        self.broken.append(broken.id)
        candidates = [c for c in (self.fallback, self.seed) if c is not None]
        self.fallback = None
        members = _in_order(population)
        for candidate in candidates:
            missing = [p for p in members if p.id not in candidate.known]
            try:
                await candidate.add(missing)
            except StrategyError as exc:
                if candidate is self.seed:
                    raise
                self._failed(emit, candidate, "restore", exc, iteration)
                self.broken.append(candidate.id)
                await candidate.close()
                continue
            self.active = candidate
            emit(
                "strategy_restore",
                iteration=iteration,
                broken=broken.id,
                restored=candidate.id,
                readded=len(missing),
            )
            break
        await broken.close()

    async def close(self) -> None:
        for strategy in {id(s): s for s in (self.active, self.fallback) if s}.values():
            if strategy is not self.seed:
                await strategy.close()

    def describe(self) -> dict[str, Any]:
        return {
            "active": self.active.id,
            "fallback": self.fallback.id if self.fallback else None,
            "broken": list(self.broken),
        }

    def strategies(self) -> Sequence[Strategy]:
        return [s for s in (self.active, self.fallback) if s is not None]
