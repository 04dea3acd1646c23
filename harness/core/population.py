"""Population: the archive of scored programs a scaffold searches over.

Contract (all implementations):

- Only the controller calls ``add``; selection policies, prompt builders and memories read.
  The child's ``metadata`` carries the selection's ``tags`` (e.g. the island it was sampled
  from), so an island population routes it without a side channel.
- ``add`` decides admission and returns whether the program became a member.  A population
  may evict members; evicted programs stay in the run store but leave ``programs()``.
- Structural work that creates programs (migration, seeding islands) happens in the block
  hooks (``end_iteration``) through ``step.new_program`` (see :mod:`harness.core.block`).
- ``programs()`` lists members in admission order; ``top(n)`` is a *stable* descending sort by
  ``Program.score`` (ties keep admission order); ``best()`` uses strict ``>`` (the first of
  equal scores wins), as the reference does.
- Deterministic: no randomness unless an RNG is passed in by the scaffold builder.
- ``state_dict``/``load_state_dict`` round-trip the population through a checkpoint; programs
  themselves come back from the store, the state only names them (plus any structure such as
  islands or grid cells).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol

from harness.core.block import Block
from harness.core.records import Program

__all__ = ["BasePopulation", "PopulationView", "ReadOnlyPopulation"]


class PopulationView(Protocol):
    """The read side of a population (what prompt builders get)."""

    def programs(self) -> Sequence[Program]: ...

    def newest_first(self) -> Iterator[Program]: ...

    def get(self, program_id: str) -> Program | None: ...

    def top(self, n: int) -> list[Program]: ...

    def best(self) -> Program | None: ...

    def __len__(self) -> int: ...

    def __contains__(self, program_id: object) -> bool: ...


class BasePopulation(Block, ABC):
    @abstractmethod
    def add(self, program: Program) -> bool:
        """Offer ``program`` for admission; return True if it is now a member."""

    @abstractmethod
    def programs(self) -> Sequence[Program]:
        """Members in admission order (a fresh list or an immutable view: callers never mutate
        what it returns, and a population never hands out its own mutable list)."""

    def newest_first(self) -> Iterator[Program]:
        """Members from the newest admitted back (a population may walk its own order instead
        of copying it, so read it before the population changes; readers of the newest few
        stop early)."""
        return reversed(self.programs())

    def get(self, program_id: str) -> Program | None:
        for p in self.programs():
            if p.id == program_id:
                return p
        return None

    def __len__(self) -> int:
        return len(self.programs())

    def __contains__(self, program_id: object) -> bool:
        return isinstance(program_id, str) and self.get(program_id) is not None

    def top(self, n: int) -> list[Program]:
        return sorted(self.programs(), key=lambda p: -p.score)[: max(0, n)]

    def best(self) -> Program | None:
        best: Program | None = None
        for p in self.programs():
            if best is None or p.score > best.score:
                best = p
        return best

    def state_dict(self) -> dict[str, Any]:
        return {"members": [p.id for p in self.programs()]}

    @abstractmethod
    def load_state_dict(self, state: Mapping[str, Any], programs: Mapping[str, Program]) -> None:
        """Restore from ``state_dict()`` output; ``programs`` maps every stored id to its record."""


class ReadOnlyPopulation:
    """A :class:`PopulationView` over a population that exposes nothing that mutates it."""

    __slots__ = ("_population",)

    def __init__(self, population: BasePopulation) -> None:
        self._population = population

    def programs(self) -> Sequence[Program]:
        return self._population.programs()  # a population returns its own copy (contract)

    def newest_first(self) -> Iterator[Program]:
        return self._population.newest_first()

    def get(self, program_id: str) -> Program | None:
        return self._population.get(program_id)

    def top(self, n: int) -> list[Program]:
        return self._population.top(n)

    def best(self) -> Program | None:
        return self._population.best()

    def __len__(self) -> int:
        return len(self._population)

    def __contains__(self, program_id: object) -> bool:
        return program_id in self._population
