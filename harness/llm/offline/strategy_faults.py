"""Fault injection for strategy rewrites: the directive line and the kinds of hostile strategy.

The EvoX scaffold appends :func:`directive` to its strategy-rewrite prompt only when the run
uses the offline model and a rate is non-zero; the offline strategy responder parses it back
with :func:`parse_directive` and draws one fault per answer with the request's seeded RNG, so
the whole path is deterministic by seed.

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
import re
from collections.abc import Mapping

__all__ = ["FAULT_KINDS", "LATENT_FAULTS", "MARKER", "directive", "draw", "parse_directive"]

MARKER = "[offline fault injection]"
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
_PAIR = re.compile(r"([a-z_]+)=([0-9.]+)")


def directive(rates: Mapping[str, float]) -> str:
    """The prompt line carrying the rates ("" when every rate is zero)."""
    active = {k: float(v) for k, v in rates.items() if float(v) > 0}
    if not active:
        return ""
    unknown = set(active) - set(FAULT_KINDS)
    if unknown:
        raise ValueError(f"unknown strategy fault kinds {sorted(unknown)}; valid: {FAULT_KINDS}")
    pairs = " ".join(f"{k}={active[k]:g}" for k in FAULT_KINDS if k in active)
    return f"{MARKER} {pairs}"


def parse_directive(text: str) -> dict[str, float]:
    for line in text.splitlines():
        if line.startswith(MARKER):
            return {k: float(v) for k, v in _PAIR.findall(line) if k in FAULT_KINDS}
    return {}


def draw(rates: Mapping[str, float], rng: random.Random) -> str | None:
    """One fault (or none) per answer; rates are probabilities summing to at most 1."""
    u, acc = rng.random(), 0.0
    for kind in FAULT_KINDS:
        acc += rates.get(kind, 0.0)
        if u < acc:
            return kind
    return None
