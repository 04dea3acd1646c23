"""Deployed strategies as the host sees them: the trusted seed, and remote LLM-written ones.

Both keep ``known`` (the ids they were fed) so the host can reject fabricated ids and knows
what a fallback is missing.  A :class:`RemoteStrategy` also keeps its *call log* (adds and
samples in order since it was deployed): replaying the log into a fresh server rebuilds the
strategy's internal state and its RNG state exactly, because the server seeds ``random`` and
``numpy.random`` at load and Valid(·) checks that a strategy is deterministic under a seed.
That is how a resumed run gets back the very strategy it had — and how a strategy whose
container an engine restart took away comes back: on an
:class:`~harness.core.errors.InfrastructureFault` the strategy waits for the engine (its
``recover``), starts a fresh server (``respawn``), replays its log and retries the call; the
strategy is not charged (the faults it survived are in ``infra_faults`` for the caller to
record).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from harness.components.population import ChunkedLog
from harness.core.errors import InfrastructureFault, StrategyError
from harness.core.records import Program
from harness.core.rng import rng_from_state, rng_state
from scaffolds.evox.client import StrategyClient
from scaffolds.evox.records import Answer, Labels, decode_answer, program_record

__all__ = ["SEED_ID", "RemoteStrategy", "SeedStrategy", "Strategy", "report_faults"]

SEED_ID = "seed"
#: Infrastructure faults one strategy call survives (a restart each) before it is an error.
INFRA_RETRIES = 3
T = TypeVar("T")


class Strategy(Protocol):
    id: str
    known: set[str]

    async def add(self, programs: Sequence[Program]) -> None: ...

    async def sample(self, k: int) -> Answer: ...

    async def close(self) -> None: ...

    def state_dict(self) -> dict[str, Any]: ...


class SeedStrategy:
    """The built-in seed strategy, run on the host (trusted code, never LLM-written).

    Same choices as ``galapagos_strategy/seed_strategy.py`` in a container seeded alike: a
    uniform parent (``choice``), then ``sample(min(k+1, n))`` of the pool minus the parent.
    """

    id = SEED_ID

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.order: list[str] = []
        self.known: set[str] = set()
        self._log = ChunkedLog()  # ``order``, as checkpoints hold it

    async def add(self, programs: Sequence[Program]) -> None:
        for program in programs:
            if program.id not in self.known:
                self.known.add(program.id)
                self.order.append(program.id)
                self._log.append(program.id)

    async def sample(self, k: int) -> Answer:
        if not self.order:
            raise StrategyError("the seed strategy has no program to sample", kind="raised")
        parent = self.rng.choice(self.order)
        drawn = self.rng.sample(self.order, min(k + 1, len(self.order)))
        context = [pid for pid in drawn if pid != parent][:k]
        return Answer(("", parent), tuple(("", pid) for pid in context))

    async def close(self) -> None:
        return None

    def state_dict(self) -> dict[str, Any]:
        return {"order_chunks": self._log.state(), "rng": rng_state(self.rng)}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        chunks = state.get("order_chunks")  # absent: a checkpoint with the flat "order"
        self.order = list(state["order"]) if chunks is None else ChunkedLog.items(chunks)
        self._log = ChunkedLog(self.order)
        self.known = set(self.order)
        rng_from_state(self.rng, state["rng"])


class RemoteStrategy:
    """An LLM-written strategy served from its own sandbox (see :mod:`scaffolds.evox.transport`)."""

    def __init__(
        self,
        strategy_id: str,
        source: str,
        client: StrategyClient,
        *,
        labels: Labels,
        seed: int,
        bulk_deadline_s: float,
        respawn: Callable[[], StrategyClient] | None = None,
        recover: Callable[[str], None] | None = None,
    ) -> None:
        self.id = strategy_id
        self.source = source
        self.client = client
        self.labels = labels
        self.seed = seed
        self.bulk_deadline_s = bulk_deadline_s
        self.known: set[str] = set()
        self.log: list[list[Any]] = []
        self._respawn = respawn
        self._recover = recover
        #: The programs fed so far, by id (a restarted server is fed them again).
        self._fed: dict[str, Program] = {}
        #: Infrastructure faults survived since the caller last looked (then cleared by it).
        self.infra_faults: list[str] = []

    async def _surviving(self, call: Callable[[], Awaitable[T]]) -> T:
        """``call()``, restarting the server (and replaying the log) after infrastructure
        faults; a strategy failure (``StrategyError``) passes through untouched."""
        faults = 0
        while True:
            try:
                return await call()
            except InfrastructureFault as exc:
                faults += 1
                if self._respawn is None or self._recover is None or faults > INFRA_RETRIES:
                    raise
                self.infra_faults.append(str(exc)[:300])
                await asyncio.to_thread(self._recover, str(exc))
                await self._restart()

    async def _restart(self) -> None:
        """A fresh server with the same module, seed and call log (same state and RNG)."""
        assert self._respawn is not None
        try:
            await self.client.close()
        except (StrategyError, InfrastructureFault, OSError):
            pass  # the old server is gone anyway
        self.client = self._respawn()
        await self._boot()
        for entry in self.log:
            if entry[0] == "a":
                await self._feed([self._fed[pid] for pid in entry[1]])
            else:
                await self.client.sample(int(entry[1]))

    async def _boot(self) -> None:
        await self.client.start()
        await self.client.load(self.source, self.labels.as_dict(), self.seed)
        await self.client.new("main", name="evox", config="evox")

    async def _feed(self, programs: Sequence[Program]) -> None:
        records = [program_record(p, self.labels) for p in programs]
        if len(records) == 1:
            await self.client.add(records)
        else:
            await self.client.add_many(records, deadline_s=self.bulk_deadline_s)

    async def boot(self) -> None:
        """Start the server, load the module with the run's labels, make the instance."""

        async def once() -> None:
            if not self.client.started:  # after a restart the fresh server is booted already
                await self._boot()

        await self._surviving(once)

    async def add(self, programs: Sequence[Program]) -> None:
        fresh = [p for p in programs if p.id not in self.known]
        if not fresh:
            return
        await self._surviving(lambda: self._feed(fresh))
        ids = [p.id for p in fresh]
        self._fed.update((p.id, p) for p in fresh)
        self.known.update(ids)
        self.log.append(["a", ids])

    async def sample(self, k: int) -> Answer:
        answer = decode_answer(await self._surviving(lambda: self.client.sample(k)))
        self.log.append(["s", k])
        return answer

    async def replay(self, log: Sequence[Sequence[Any]], programs: Mapping[str, Program]) -> None:
        """Re-run a recorded call log (answers to samples are discarded)."""
        for entry in log:
            if entry[0] == "a":
                missing = [pid for pid in entry[1] if pid not in programs]
                if missing:
                    raise StrategyError(
                        f"cannot replay strategy {self.id}: programs {missing[:3]} are not "
                        "in the run store",
                        kind="protocol",
                    )
                await self.add([programs[pid] for pid in entry[1]])
            else:
                await self.sample(int(entry[1]))

    async def close(self) -> None:
        await self.client.close()

    def state_dict(self) -> dict[str, Any]:
        return {"id": self.id, "source": self.source, "seed": self.seed, "log": list(self.log)}


def report_faults(strategy: Strategy, emit: Callable[..., None], iteration: int, op: str) -> None:
    """Record the infrastructure faults a strategy survived (and forget them)."""
    faults = getattr(strategy, "infra_faults", None)
    if faults:
        emit(
            "strategy_infrastructure_retry",
            iteration=iteration,
            strategy=strategy.id,
            op=op,
            faults=list(faults),
        )
        faults.clear()
