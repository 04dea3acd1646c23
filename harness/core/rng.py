"""Seeded RNGs: one per component, derived from the run seed by name, checkpointable as JSON."""

from __future__ import annotations

import hashlib
import random
import weakref
from typing import Any

from harness.core.store import LastChanged

__all__ = ["TrackedRandom", "derive_seed", "make_rng", "rng_from_state", "rng_state"]


def derive_seed(seed: int, name: str) -> int:
    """A stable 64-bit seed for ``name`` under the run seed (independent of PYTHONHASHSEED)."""
    digest = hashlib.sha256(f"{seed}:{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def make_rng(seed: int, name: str) -> random.Random:
    return TrackedRandom(derive_seed(seed, name))


_RANDOM = random.Random.random
_GETRANDBITS = random.Random.getrandbits
#: Words in the Mersenne Twister's state (``getstate()[1]`` is these, then the position).
_N = 624


class TrackedRandom(random.Random):
    """A ``random.Random`` that draws the same numbers and counts the 32-bit words it drew
    (``words``) and its seeds and ``setstate`` calls (``epoch``), so that :func:`rng_state` can
    tell its state without reading it (``getstate`` builds 625 ints: ~7 us; comparing them with
    the last ones, as many again): one that drew nothing has not moved; one whose position plus
    the words drawn since stays within the state's 624 words has the same words, only its
    position moved.  Every draw of ``random.Random`` goes through ``random`` (two words) or
    ``getrandbits`` (one word per 32 bits; ``_randbelow`` stays the one built on
    ``getrandbits``, as in the base class); ``gauss`` may also hand out its kept ``gauss_next``
    without a draw, which ``rng_state`` reads itself."""

    words = 0
    epoch = 0
    gauss_next: Any  # (set by ``random.Random``)

    def random(self) -> float:
        self.words += 2
        return _RANDOM(self)

    def getrandbits(self, k: int, /) -> int:
        bits = _GETRANDBITS(self, k)
        self.words += (k + 31) // 32  # (a negative k raised)
        return bits

    def seed(self, a: Any = None, version: int = 2) -> None:
        self.epoch += 1
        super().seed(a, version)

    def setstate(self, state: Any) -> None:
        self.epoch += 1
        super().setstate(state)


def _word_model_holds() -> bool:
    """Whether this interpreter's generator draws the words ``TrackedRandom`` counts (checked
    once against ``getstate``; if not, ``rng_state`` reads every moved state)."""
    probe = TrackedRandom(0)
    probe.random()  # the first draw after seeding makes the words
    start, words = probe.getstate()[1][-1], probe.words
    for k in (0, 1, 31, 32, 33, 64, 65):
        probe.getrandbits(k)
    probe.random()
    probe.randrange(1000)
    return bool(probe.getstate()[1][-1] - start == probe.words - words)


_WORD_MODEL = _word_model_holds()

#: Per RNG: its state tuple when last read (``None``: not read, told), the list handed out
#: for it, and (a ``TrackedRandom``) its epoch, words drawn, ``gauss_next`` and position then.
_LAST: weakref.WeakKeyDictionary[random.Random, tuple[Any, list[Any], Any]] = (
    weakref.WeakKeyDictionary()
)


def rng_state(rng: random.Random) -> list[Any]:
    """The RNG's state as JSON values.  An RNG that has not moved since it was last asked gets
    the same list again (checkpointed every iteration, it then costs the store nothing): the
    list is shared, so never change it.  One whose words have not changed since (only its
    position moved: the words change every 624 draws) gets a list of the same int objects but
    the last, which says so (:class:`~harness.core.store.LastChanged`: a checkpoint delta takes
    that item alone).  For a
    :class:`TrackedRandom` both are told without reading its state."""
    last = _LAST.get(rng)
    tracked = rng if isinstance(rng, TrackedRandom) and type(rng) is TrackedRandom else None
    if last is not None and tracked is not None:
        handed, mark = last[1], last[2]
        if mark is not None and mark[0] == tracked.epoch:
            drawn = tracked.words - mark[1]
            gauss = tracked.gauss_next
            if drawn == 0 and gauss is mark[2]:
                return handed
            position = mark[3] + drawn
            if _WORD_MODEL and position <= _N:  # no new words were made: a new position
                out = [handed[0], LastChanged.after(handed[1], position), gauss]
                _LAST[rng] = (None, out, (tracked.epoch, tracked.words, gauss, position))
                return out
    state = rng.getstate()
    version, internal, gauss = state
    mark = None
    if tracked is not None:
        mark = (tracked.epoch, tracked.words, tracked.gauss_next, internal[-1])
    if last is not None:
        before, handed, _ = last
        if before is None:  # told, not read: the list handed out stands for it
            before = (handed[0], tuple(handed[1]), handed[2])
        if before[1][-1] == internal[-1] and before == state:  # (a moved one: a new position)
            _LAST[rng] = (before, handed, mark)
            return handed
        if before[1][:-1] == internal[:-1]:
            out = [version, LastChanged.after(handed[1], internal[-1]), gauss]
            _LAST[rng] = (state, out, mark)
            return out
    out = [version, list(internal), gauss]
    _LAST[rng] = (state, out, mark)
    return out


def rng_from_state(rng: random.Random, state: list[Any]) -> random.Random:
    version, internal, gauss = state
    rng.setstate((version, tuple(internal), gauss))
    return rng
