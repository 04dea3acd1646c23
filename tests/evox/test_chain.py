"""The fallback chain with real strategy servers (local subprocesses running test fixtures)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from harness.components.population import InMemoryPopulation
from harness.core.records import Program
from scaffolds.evox.chain import StrategyChain
from scaffolds.evox.factory import ContainerLimits, LocalStrategyFactory
from scaffolds.evox.labels import default_labels
from scaffolds.evox.seed import seed_source
from scaffolds.evox.strategies import RemoteStrategy, SeedStrategy
from tests.evox.strategies import GOOD, module

LONG = "".join(f"# line {i}\n" for i in range(10))
LIMITS = ContainerLimits(call_s=5.0, bulk_s=30.0)


class Events:
    def __init__(self) -> None:
        self.items: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, kind: str, **payload: Any) -> None:
        self.items.append((kind, payload))

    def kinds(self) -> list[str]:
        return [k for k, _ in self.items]


def program(i: int) -> Program:
    return Program(
        id=f"p{i}",
        code=LONG + f"score = {i}\n",
        iteration=i,
        metrics={"combined_score": i / 10},
        score=i / 10,
    )


async def remote(
    factory: LocalStrategyFactory, sid: str, source: str, seed: int = 1
) -> RemoteStrategy:
    strategy = RemoteStrategy(
        sid,
        source,
        factory.client(LIMITS),
        labels=default_labels(),
        seed=seed,
        bulk_deadline_s=30.0,
    )
    await strategy.boot()
    return strategy


async def chain_with(
    factory: LocalStrategyFactory, pop: InMemoryPopulation, *sources: str
) -> StrategyChain:
    """Seed active, then each source deployed in turn (fed the population, as on a switch)."""
    chain = StrategyChain(SeedStrategy(random.Random(0)), default_labels())
    await chain.seed.add(pop.programs())
    for i, source in enumerate(sources):
        strategy = await remote(factory, f"s{i + 1}", source)
        await strategy.add(sorted(pop.programs(), key=lambda p: p.iteration))
        await chain.switch(strategy, 0, lambda *a, **k: None)
    return chain


def pop_of(n: int) -> InMemoryPopulation:
    pop = InMemoryPopulation()
    for i in range(n):
        pop.add(program(i))
    return pop


async def test_a_failed_sample_restores_the_previous_strategy_and_retries(
    local_factory: LocalStrategyFactory,
) -> None:
    pop = pop_of(4)
    raises = module(sample="raise RuntimeError('sample is broken')")
    chain = await chain_with(local_factory, pop, GOOD, raises)
    events = Events()
    try:
        selection = await chain.select(pop, 2, 7, events)
        assert events.kinds() == ["strategy_failure", "strategy_restore", "strategy_retry"]
        failure, restore = events.items[0][1], events.items[1][1]
        assert failure["strategy"] == "s2" and failure["error_kind"] == "raised"
        assert "sample is broken" in failure["error"]
        assert restore == {"iteration": 7, "broken": "s2", "restored": "s1", "readded": 0}
        assert selection.info["strategy"] == "s1" and selection.parent is not None
        assert chain.active.id == "s1" and chain.fallback is None and chain.broken == ["s2"]
    finally:
        await chain.close()


async def test_programs_the_fallback_missed_are_readded_in_order(
    local_factory: LocalStrategyFactory,
) -> None:
    pop = pop_of(3)
    breaks_on_fifth = module(add="if len(self.programs) >= 4:\n    raise ValueError('full')")
    chain = await chain_with(local_factory, pop, GOOD, breaks_on_fifth)
    events = Events()
    try:
        pop.add(program(3))
        await chain.add([program(3)], pop, 3, events)  # the broken strategy takes this one
        pop.add(program(4))
        await chain.add([program(4)], pop, 4, events)  # ... and fails on this one
        assert events.kinds() == ["strategy_failure", "strategy_restore"]
        assert events.items[0][1]["op"] == "add"
        assert events.items[1][1]["readded"] == 2
        active = chain.active
        assert active.id == "s1" and active.known == {f"p{i}" for i in range(5)}
        assert isinstance(active, RemoteStrategy)
        assert active.log[-1] == ["a", ["p3", "p4"]]
    finally:
        await chain.close()


async def test_a_fallback_that_fails_while_restored_gives_way_to_the_seed(
    local_factory: LocalStrategyFactory,
) -> None:
    pop = pop_of(3)
    refuses_more = module(add="if len(self.programs) >= 3:\n    raise ValueError('no more')")
    raises = module(sample="raise RuntimeError('sample is broken')")
    chain = await chain_with(local_factory, pop, refuses_more, raises)
    pop.add(program(3))
    events = Events()
    try:
        await chain.add([program(3)], pop, 3, events)
        selection = await chain.select(pop, 2, 4, events)
        assert events.kinds() == [
            "strategy_failure",  # s2 sample
            "strategy_failure",  # s1 while being restored (cannot take p3)
            "strategy_restore",  # → seed
            "strategy_retry",
        ]
        assert events.items[1][1]["op"] == "restore"
        assert events.items[2][1]["restored"] == "seed"
        assert chain.active is chain.seed and set(chain.broken) == {"s1", "s2"}
        assert selection.info["strategy"] == "seed"
        assert chain.seed.known == {f"p{i}" for i in range(4)}
    finally:
        await chain.close()


@pytest.mark.parametrize("seed", [0, 7, 12345])
async def test_the_host_seed_strategy_chooses_like_the_seed_module(
    seed: int, local_factory: LocalStrategyFactory
) -> None:
    """The built-in seed runs on the host; its module (shown to the meta-LLM and usable in a
    sandbox) must make the very same choices under the same seed."""
    pop = pop_of(9)
    host = SeedStrategy(random.Random(seed))
    await host.add(pop.programs())
    sandboxed = await remote(local_factory, "seed-module", seed_source(), seed=seed)
    try:
        await sandboxed.add(pop.programs())
        for k in (4, 4, 0, 8, 12, 3):
            assert await host.sample(k) == await sandboxed.sample(k)
    finally:
        await sandboxed.close()


async def test_replaying_the_call_log_rebuilds_the_strategy_exactly(
    local_factory: LocalStrategyFactory,
) -> None:
    pop = pop_of(6)
    first = await remote(local_factory, "s1", seed_source(), seed=3)
    try:
        await first.add(pop.programs())
        for i in range(6, 9):
            await first.sample(3)
            pop.add(program(i))
            await first.add([program(i)])
        log = list(first.log)
        again = await remote(local_factory, "s1", seed_source(), seed=3)
        try:
            await again.replay(log, {p.id: p for p in pop.programs()})
            assert again.log == log and again.known == first.known
            for _ in range(5):
                assert await again.sample(4) == await first.sample(4)
        finally:
            await again.close()
    finally:
        await first.close()
