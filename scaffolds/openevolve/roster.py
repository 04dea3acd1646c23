"""``Roster``: ids in the order they joined, each with a value, as an ordered dict keeps them,
plus what a checkpoint and a seeded draw need without copying them all every iteration.

The ids live in chunks by arrival (the ``k``-th id to join goes to chunk ``k // CHUNK``), so
the chunks, read in order, list the ids in dict order, and an id's chunk is known without a
search.  A checkpoint gets each chunk as a list that is handed out and never changed: a chunk
that changed gets a new one (see ``harness.store._delta``: unchanged chunks are skipped by
identity, a changed one costs a short splice).  Emptied chunks are dropped; once most chunks are
sparse they are packed again (all new lists, written whole once).  ``layout`` (the chunks'
numbers and the arrivals so far) lets a restore put every id back in the same chunk, so that a
resumed run's checkpoints are the uninterrupted run's.

A roster is a ``Sequence`` of its ids: ``random.choice``, ``choices`` and ``sample`` draw the
same items from it as from ``list(roster)``, reading only the positions they draw.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Sequence
from itertools import chain
from typing import Any, overload

__all__ = ["Roster", "Without"]


class Roster(Sequence[Any]):
    CHUNK = 128

    def __init__(self, items: Iterable[tuple[Hashable, Any]] = ()) -> None:
        self._chunk_of: dict[Any, int] = {}
        #: Per chunk number (ascending): its ids and their values, in order.
        self._chunks: dict[int, tuple[list[Any], list[Any]]] = {}
        #: Chunks whose id lists (value lists) were handed out since they last changed: copied
        #: before a change.
        self._shared: set[int] = set()
        self._shared_values: set[int] = set()
        #: Per chunk, each id's position in it (built when ``index`` asks; dropped when an id
        #: leaves the chunk).
        self._positions: dict[int, dict[Any, int]] = {}
        self._arrivals = 0
        #: ``id_chunks``, ``value_chunks`` and ``layout`` as last handed out (``None``: changed
        #: since): an unchanged roster hands out the same lists.
        self._outer: list[list[Any] | None] = [None, None, None]
        for key, value in items:
            self.add(key, value)

    # -- changes --------------------------------------------------------------------------------
    def _writable(self, k: int) -> tuple[list[Any], list[Any]]:
        self._outer = [None, None, None]
        lists = self._chunks[k]
        if k in self._shared:
            self._shared.discard(k)
            lists = self._chunks[k] = (list(lists[0]), lists[1])
        if k in self._shared_values:
            self._shared_values.discard(k)
            lists = self._chunks[k] = (lists[0], list(lists[1]))
        return lists

    def add(self, key: Any, value: Any = None) -> None:
        """``key`` joins last; if it is here, it keeps its place and takes ``value`` (as a dict's
        item does)."""
        k = self._chunk_of.get(key)
        if k is not None:
            ids, values = self._writable(k)
            values[ids.index(key)] = value
            return
        k = self._arrivals // self.CHUNK
        self._arrivals += 1
        if k not in self._chunks:
            self._chunks[k] = ([], [])
        ids, values = self._writable(k)
        positions = self._positions.get(k)
        if positions is not None:
            positions[key] = len(ids)
        ids.append(key)
        values.append(value)
        self._chunk_of[key] = k

    def discard(self, key: Any) -> bool:
        """``key`` leaves (if here); whether it was here."""
        k = self._chunk_of.pop(key, None)
        if k is None:
            return False
        ids, values = self._writable(k)
        positions = self._positions.pop(k, None)
        at = positions[key] if positions is not None else ids.index(key)
        del ids[at]
        del values[at]
        if not ids:
            del self._chunks[k]
            self._shared.discard(k)
            self._shared_values.discard(k)
        if len(self._chunks) > 2 * (len(self._chunk_of) // self.CHUNK) + 4:
            self._pack()
        return True

    def _pack(self) -> None:
        items = list(self.items())
        self._chunk_of.clear()
        self._chunks.clear()
        self._shared.clear()
        self._shared_values.clear()
        self._positions.clear()
        self._arrivals = 0
        for key, value in items:
            self.add(key, value)

    # -- reading --------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._chunk_of)

    def __contains__(self, key: object) -> bool:
        return key in self._chunk_of

    def __iter__(self) -> Iterator[Any]:
        for ids, _ in self._chunks.values():
            yield from ids

    def __reversed__(self) -> Iterator[Any]:
        for ids, _ in reversed(self._chunks.values()):
            yield from reversed(ids)

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...
    def __getitem__(self, index: int | slice) -> Any:
        """The id at position ``index`` (a slice: a list)."""
        if isinstance(index, slice):
            return list(self)[index]
        if index < 0:
            index += len(self)
        if index >= 0:
            for ids, _ in self._chunks.values():
                if index < len(ids):
                    return ids[index]
                index -= len(ids)
        raise IndexError("roster index out of range")

    def index(self, key: Any, start: int = 0, stop: int | None = None) -> int:
        """The position of ``key`` (``ValueError`` if absent; ``start``/``stop`` as a list's)."""
        k = self._chunk_of.get(key)
        if k is None:
            raise ValueError(f"{key!r} is not in the roster")
        offset = 0
        for kk, (ids, _) in self._chunks.items():
            if kk == k:
                break
            offset += len(ids)
        positions = self._positions.get(k)
        if positions is None:
            chunk = self._chunks[k][0]
            positions = self._positions[k] = {key: at for at, key in enumerate(chunk)}
        at = offset + positions[key]
        if at < start or (stop is not None and at >= stop):
            raise ValueError(f"{key!r} is not in the roster's range")
        return at

    def count(self, key: Any) -> int:
        return int(key in self._chunk_of)

    def items(self) -> Iterator[tuple[Any, Any]]:
        for ids, values in self._chunks.values():
            yield from zip(ids, values, strict=True)

    def values(self) -> list[Any]:
        """Every value, in order."""
        return list(chain.from_iterable(values for _, values in self._chunks.values()))

    # -- checkpoint -----------------------------------------------------------------------------
    # The lists handed out below are shared with earlier states: never change them.
    def id_chunks(self) -> list[list[Any]]:
        """The ids, chunk by chunk: an unchanged chunk's list is the one handed out before (the
        outer list too, while nothing changed)."""
        outer = self._outer[0]
        if outer is None:
            self._shared.update(self._chunks)
            outer = self._outer[0] = [ids for ids, _ in self._chunks.values()]
        return outer

    def value_chunks(self) -> list[list[Any]]:
        """The values, chunk by chunk, alongside ``id_chunks``."""
        outer = self._outer[1]
        if outer is None:
            self._shared_values.update(self._chunks)
            outer = self._outer[1] = [values for _, values in self._chunks.values()]
        return outer

    def layout(self) -> list[int]:
        """The chunks' numbers, then the arrivals so far."""
        outer = self._outer[2]
        if outer is None:
            outer = self._outer[2] = [*self._chunks, self._arrivals]
        return outer

    @classmethod
    def restore(
        cls,
        id_chunks: Sequence[Sequence[Any]],
        value_chunks: Sequence[Sequence[Any]] | None = None,
        layout: Sequence[int] | None = None,
    ) -> Roster:
        """The roster whose ``id_chunks``, ``value_chunks`` (``None``: all ``None``) and
        ``layout`` these are (no layout: packed afresh)."""
        if value_chunks is None:
            value_chunks = [[None] * len(chunk) for chunk in id_chunks]
        chunks = [
            (list(ids), list(values)) for ids, values in zip(id_chunks, value_chunks, strict=True)
        ]
        if any(len(ids) != len(values) for ids, values in chunks):
            raise ValueError("a roster's ids and values differ in length")
        numbers = [int(k) for k in layout[:-1]] if layout is not None else []
        arrivals = int(layout[-1]) if layout else 0
        fits = (
            layout is not None
            and len(numbers) == len(chunks)
            and all(0 < len(ids) <= cls.CHUNK for ids, _ in chunks)
            and all(a < b for a, b in zip(numbers, numbers[1:], strict=False))
            and (
                not numbers
                or (numbers[0] >= 0 and arrivals >= numbers[-1] * cls.CHUNK + len(chunks[-1][0]))
            )
            and sum(len(ids) for ids, _ in chunks) == len({key for ids, _ in chunks for key in ids})
        )
        if not fits:  # no layout (or not this size's): packed afresh
            return cls(pair for ids, values in chunks for pair in zip(ids, values, strict=True))
        roster = cls()
        for k, lists in zip(numbers, chunks, strict=True):
            roster._chunks[k] = lists
            roster._chunk_of.update(dict.fromkeys(lists[0], k))
        roster._arrivals = arrivals
        return roster


class Without(Sequence[Any]):
    """``[x for x in roster if x not in excluded]`` without the copy: positions are read
    through the roster, past the few excluded ids."""

    def __init__(self, roster: Roster, excluded: Iterable[Any]) -> None:
        self._roster = roster
        self._skips = sorted(roster.index(key) for key in set(excluded) if key in roster)

    def __len__(self) -> int:
        return len(self._roster) - len(self._skips)

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return list(self)[index]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("index out of range")
        for skip in self._skips:
            if skip <= index:
                index += 1
            else:
                break
        return self._roster[index]

    def __iter__(self) -> Iterator[Any]:
        skipped = {self._roster[i] for i in self._skips}
        return (key for key in self._roster if key not in skipped)
