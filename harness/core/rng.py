"""Seeded RNGs: one per component, derived from the run seed by name, checkpointable as JSON."""

from __future__ import annotations

import hashlib
import random
import weakref
from typing import Any

__all__ = ["derive_seed", "make_rng", "rng_from_state", "rng_state"]


def derive_seed(seed: int, name: str) -> int:
    """A stable 64-bit seed for ``name`` under the run seed (independent of PYTHONHASHSEED)."""
    digest = hashlib.sha256(f"{seed}:{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def make_rng(seed: int, name: str) -> random.Random:
    return random.Random(derive_seed(seed, name))


#: Per RNG: its state when last asked, and the list handed out for it.
_LAST: weakref.WeakKeyDictionary[random.Random, tuple[Any, list[Any]]] = weakref.WeakKeyDictionary()


def rng_state(rng: random.Random) -> list[Any]:
    """The RNG's state as JSON values.  An RNG that has not moved since it was last asked gets
    the same list again (checkpointed every iteration, it then costs the store nothing): the
    list is shared, so never change it.  One whose words have not changed since (only its
    position moved: the words change every 624 draws) gets a list of the same int objects but
    the last, so that a checkpoint delta compares them by identity."""
    state = rng.getstate()
    last = _LAST.get(rng)
    version, internal, gauss = state
    if last is not None:
        before, handed = last
        if before[1][-1] == internal[-1] and before == state:  # (a moved one: a new position)
            return handed
        if before[1][:-1] == internal[:-1]:
            words = handed[1][:-1]
            words.append(internal[-1])
            out = [version, words, gauss]
            _LAST[rng] = (state, out)
            return out
    out = [version, list(internal), gauss]
    _LAST[rng] = (state, out)
    return out


def rng_from_state(rng: random.Random, state: list[Any]) -> random.Random:
    version, internal, gauss = state
    rng.setstate((version, tuple(internal), gauss))
    return rng
