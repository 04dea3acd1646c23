"""``InMemoryPopulation``: the keep-all archive, optionally capped.

Differs from the base only in speed: it keeps members sorted by (score desc, admission order)
so ``top``/``best`` cost O(n) at most and ``add`` is a binary insertion.  With a ``capacity``,
admitting a program past the cap evicts the worst member (the newest of equally bad ones); if
that is the newcomer itself, it is not admitted.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from pydantic import Field

from harness.core.blocks import block
from harness.core.population import BasePopulation
from harness.core.records import Program
from harness.core.validation import StrictModel

__all__ = ["ChunkedLog", "InMemoryPopulation", "InMemoryPopulationConfig", "keep_all"]


class ChunkedLog:
    """Items in the order they came, as a checkpoint holds them: full chunks of ``CHUNK`` items
    (handed out and never changed again, so a checkpoint delta skips them by identity) and the
    open tail.  A block whose state holds a long append-only list keeps one of these for it
    instead of copying the list into every checkpoint."""

    CHUNK = 1024

    def __init__(self, items: Iterable[Any] = ()) -> None:
        self.reset(items)

    def reset(self, items: Iterable[Any]) -> None:
        every = list(items)
        cut = len(every) - len(every) % self.CHUNK
        self._chunks = [every[i : i + self.CHUNK] for i in range(0, cut, self.CHUNK)]
        self._tail = every[cut:]

    def append(self, item: Any) -> None:
        self._tail.append(item)
        if len(self._tail) == self.CHUNK:
            self._chunks.append(self._tail)
            self._tail = []

    def state(self) -> list[list[Any]]:
        """A fresh outer list; the full chunks are shared with earlier states (never changed)."""
        return [*self._chunks, list(self._tail)]

    @staticmethod
    def items(chunks: Iterable[Iterable[Any]]) -> list[Any]:
        """The items of a ``state()``, in order."""
        return [item for chunk in chunks for item in chunk]


class InMemoryPopulationConfig(StrictModel):
    #: ``None`` keeps every program (the reference has no cap).
    capacity: int | None = Field(None, ge=1)


class InMemoryPopulation(BasePopulation):
    def __init__(self, capacity: int | None = None) -> None:
        self.capacity = capacity
        self._by_id: dict[str, Program] = {}
        self._seq: dict[str, int] = {}
        self._next_seq = 0
        # Sort keys (-score, admission seq, id); ties keep admission order.
        self._ranked: list[tuple[float, int, str]] = []
        # Member ids in admission order, for the checkpoint.
        self._log = ChunkedLog()

    def add(self, program: Program) -> bool:
        if program.id in self._by_id:
            return False
        seq = self._next_seq
        self._next_seq += 1
        self._by_id[program.id] = program
        self._seq[program.id] = seq
        bisect.insort(self._ranked, (-program.score, seq, program.id))
        if self.capacity is not None and len(self._ranked) > self.capacity:
            _, _, evicted = self._ranked.pop()
            del self._by_id[evicted]
            del self._seq[evicted]
            self._log.reset(self._by_id)
            return evicted != program.id
        self._log.append(program.id)
        return True

    def programs(self) -> Sequence[Program]:
        return list(self._by_id.values())

    def newest_first(self) -> Iterator[Program]:
        return reversed(self._by_id.values())  # no copy: read it before the next add

    def get(self, program_id: str) -> Program | None:
        return self._by_id.get(program_id)

    def __len__(self) -> int:
        return len(self._by_id)

    def __contains__(self, program_id: object) -> bool:
        return program_id in self._by_id

    def top(self, n: int) -> list[Program]:
        return [self._by_id[pid] for _, _, pid in self._ranked[: max(0, n)]]

    def best(self) -> Program | None:
        return self._by_id[self._ranked[0][2]] if self._ranked else None

    def state_dict(self) -> dict[str, Any]:
        return {"member_chunks": self._log.state(), "next_seq": self._next_seq}

    def load_state_dict(self, state: Mapping[str, Any], programs: Mapping[str, Program]) -> None:
        self._by_id.clear()
        self._seq.clear()
        self._ranked.clear()
        self._log.reset(())
        self._next_seq = 0
        chunks = state.get("member_chunks")
        members = state["members"] if chunks is None else ChunkedLog.items(chunks)
        for pid in members:
            self.add(programs[pid])
        self._next_seq = int(state.get("next_seq", self._next_seq))


@block("keep_all", "Every admitted program, ranked by score; optionally capped (worst evicted).")
def keep_all(config: InMemoryPopulationConfig) -> InMemoryPopulation:
    return InMemoryPopulation(capacity=config.capacity)
