"""Fault injection for strategy rewrites: the kinds of hostile strategy and their draw.

A test seam, not a setting: a test builds the offline model's chain with
``strategy_responder(faults={...})`` (``tests/evox/e2e.py --faults``, ``tests/evox/fakes.py``)
and the responder draws one fault per answer with the request's seeded RNG, so the whole path
is deterministic by seed.  No scaffold config or prompt carries it.

Kinds, and the gate that is expected to stop each:

=================  ===================================================================  ==========
kind               what the strategy does                                                caught by
=================  ===================================================================  ==========
crash_sample       raises in ``sample`` a few iterations after deployment (latent)       fallback
crash_add          raises in ``add`` a few iterations after deployment (latent)          fallback
hang               loops forever in ``sample`` a few iterations in (latent)              fallback
alloc              allocates without bound in ``sample`` a few iterations in (latent)    fallback
fabricate          returns a program object it made up                                   Valid(·)
excess_context     returns more context programs than asked for                          Valid(·)
read_env           reads the process environment (``os.environ``)                        pre-filter
read_files         opens host files                                                      pre-filter
network            opens a socket to the outside                                         pre-filter
=================  ===================================================================  ==========

"Latent" faults key on real solutions (longer than any Valid(·) fixture), so they pass
Valid(·) and fire only at run time, a few iterations after the switch.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

__all__ = ["FAULT_KINDS", "LATENT_FAULTS", "check_rates", "draw"]

FAULT_KINDS = (
    "crash_sample",
    "crash_add",
    "hang",
    "alloc",
    "fabricate",
    "excess_context",
    "read_env",
    "read_files",
    "network",
)
LATENT_FAULTS = ("crash_sample", "crash_add", "hang", "alloc")


def check_rates(rates: Mapping[str, float]) -> dict[str, float]:
    """The rates as floats; ``ValueError`` naming the problem for unknown kinds, a rate outside
    [0, 1] or rates summing to more than 1."""
    unknown = set(rates) - set(FAULT_KINDS)
    if unknown:
        raise ValueError(
            f"unknown strategy fault kinds {sorted(unknown)}; valid: {', '.join(FAULT_KINDS)}"
        )
    checked = {kind: float(rate) for kind, rate in rates.items()}
    if any(not 0 <= v <= 1 for v in checked.values()) or sum(checked.values()) > 1 + 1e-9:
        raise ValueError("strategy fault rates must lie in [0, 1] and sum to at most 1")
    return checked


def draw(rates: Mapping[str, float], rng: random.Random) -> str | None:
    """One fault (or none) per answer; rates are probabilities summing to at most 1."""
    u, acc = rng.random(), 0.0
    for kind in FAULT_KINDS:
        acc += rates.get(kind, 0.0)
        if u < acc:
            return kind
    return None
