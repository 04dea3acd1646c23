"""Seeded RNGs: one per component, derived from the run seed by name, checkpointable as JSON."""

from __future__ import annotations

import hashlib
import random
from typing import Any

__all__ = ["derive_seed", "make_rng", "rng_from_state", "rng_state"]


def derive_seed(seed: int, name: str) -> int:
    """A stable 64-bit seed for ``name`` under the run seed (independent of PYTHONHASHSEED)."""
    digest = hashlib.sha256(f"{seed}:{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def make_rng(seed: int, name: str) -> random.Random:
    return random.Random(derive_seed(seed, name))


def rng_state(rng: random.Random) -> list[Any]:
    version, internal, gauss = rng.getstate()
    return [version, list(internal), gauss]


def rng_from_state(rng: random.Random, state: list[Any]) -> random.Random:
    version, internal, gauss = state
    rng.setstate((version, tuple(internal), gauss))
    return rng
