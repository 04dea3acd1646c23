"""Deployed strategies as the host sees them: the trusted seed, and remote LLM-written ones.

Both keep ``known`` (the ids they were fed) so the host can reject fabricated ids and knows
what a fallback is missing.  A :class:`RemoteStrategy` also keeps its *call log* (adds and
samples in order since it was deployed): replaying the log into a fresh server rebuilds the
strategy's internal state and its RNG state exactly, because the server seeds ``random`` and
``numpy.random`` at load and Valid(·) checks that a strategy is deterministic under a seed.
That is how a resumed run gets back the very strategy it had.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from harness.core.errors import StrategyError
from harness.core.records import Program
from harness.core.rng import rng_from_state, rng_state
from harness.evox.client import StrategyClient
from harness.evox.records import Answer, Labels, decode_answer, program_record

__all__ = ["SEED_ID", "RemoteStrategy", "SeedStrategy", "Strategy"]

SEED_ID = "seed"


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

    async def add(self, programs: Sequence[Program]) -> None:
        for program in programs:
            if program.id not in self.known:
                self.known.add(program.id)
                self.order.append(program.id)

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
        return {"order": list(self.order), "rng": rng_state(self.rng)}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.order = list(state["order"])
        self.known = set(self.order)
        rng_from_state(self.rng, state["rng"])


class RemoteStrategy:
    """An LLM-written strategy served from its own sandbox (see :mod:`harness.evox.transport`)."""

    def __init__(
        self,
        strategy_id: str,
        source: str,
        client: StrategyClient,
        *,
        labels: Labels,
        seed: int,
        bulk_deadline_s: float,
    ) -> None:
        self.id = strategy_id
        self.source = source
        self.client = client
        self.labels = labels
        self.seed = seed
        self.bulk_deadline_s = bulk_deadline_s
        self.known: set[str] = set()
        self.log: list[list[Any]] = []

    async def boot(self) -> None:
        """Start the server, load the module with the run's labels, make the instance."""
        await self.client.start()
        await self.client.load(self.source, self.labels.as_dict(), self.seed)
        await self.client.new("main", name="evox", config="evox")

    async def add(self, programs: Sequence[Program]) -> None:
        fresh = [p for p in programs if p.id not in self.known]
        if not fresh:
            return
        records = [program_record(p, self.labels) for p in fresh]
        if len(records) == 1:
            await self.client.add(records)
        else:
            await self.client.add_many(records, deadline_s=self.bulk_deadline_s)
        ids = [p.id for p in fresh]
        self.known.update(ids)
        self.log.append(["a", ids])

    async def sample(self, k: int) -> Answer:
        answer = decode_answer(await self.client.sample(k))
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
