"""Trusted scorer for online 1-D bin packing with an evolved priority function (FunSearch).

The packing loop runs here, in the trusted process: for each arriving item it asks the
candidate's ``priority(item, bins)`` for one score per bin that can take the item (``bins`` holds
the remaining capacities of the open bins that fit, then one fresh, empty bin last) and puts the
item in the highest-scoring bin.  The candidate only ever returns scores, so it cannot forge the
number of bins used.

Instances are generated here, deterministically, from fixed seeds with a self-contained
generator (no data files, no dependence on numpy's random streams).  The generator's state is a
keyed hash of the seed with :data:`INSTANCE_KEY`, which only this trusted file holds: the
candidate runs as another user and cannot read it, so it cannot recognise an instance from its
first items and regenerate the rest (a clairvoyant "online" heuristic scored 1.015 against
plain seeds).

- OR3-like: capacity 150, 500 items of integer size uniform in [20, 100];
- Weibull-like: capacity 100, 1000 items of size Weibull(shape 3, scale 45) rounded, in [1, 100].

Training instances decide ``combined_score``; held-out instances (other seeds) are reported as
separate metrics and never enter the score.  Quality is the excess of bins over the L1 lower
bound ceil(Σ sizes / capacity), in percent.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import numpy as np

ENTRY_POINT = "priority"
#: Mean excess (%) over L1 of FunSearch's OR heuristic on OR3 (3.11) and Weibull 5k (3.03).
BEST_KNOWN_EXCESS_PCT = 3.07
MASK64 = (1 << 64) - 1
#: Keys the instance generator (see the module doc).  Changing it changes every score.
INSTANCE_KEY = "fbfbbfb705cc3890925ea45e55b1eecb"


class InvalidSolution(ValueError):
    """The candidate's answer breaks the contract; the message is fed back to the LLM."""


def invalid(reason: str) -> dict[str, Any]:
    return {"combined_score": 0.0, "validity": 0.0, "error": reason}


def _uniforms(seed: int, count: int) -> list[float]:
    """``count`` uniforms in [0, 1) from splitmix64, started from a keyed hash of ``seed``: the
    same numbers on every platform, unpredictable without :data:`INSTANCE_KEY`."""
    digest = hashlib.blake2b(str(seed).encode(), key=INSTANCE_KEY.encode(), digest_size=8)
    state = int.from_bytes(digest.digest(), "big") & MASK64
    out = []
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) & MASK64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        z ^= z >> 31
        out.append((z >> 11) / float(1 << 53))
    return out


def or3_instance(seed: int, n_items: int = 500) -> tuple[list[int], int]:
    """Sizes uniform in [20, 100], capacity 150 (the OR-Library 'u' distribution of OR3)."""
    return [20 + int(u * 81) for u in _uniforms(seed, n_items)], 150


def weibull_instance(seed: int, n_items: int = 1000) -> tuple[list[int], int]:
    """Sizes Weibull(shape 3, scale 45) by inverse CDF, rounded and clipped to [1, 100]."""
    sizes = [
        min(100, max(1, round(45.0 * (-math.log1p(-u)) ** (1.0 / 3.0))))
        for u in _uniforms(seed, n_items)
    ]
    return sizes, 100


#: (kind, seeds, items per instance).  Seeds are arbitrary but fixed forever: changing them
#: changes every score.
STAGE1_SET = {"or": ("or3", (101,), 200), "weibull": ("weibull", (201,), 300)}
TRAIN_SET = {"or": ("or3", (1, 2, 3, 4, 5), 500), "weibull": ("weibull", (11, 12, 13), 1000)}
HELDOUT_SET = {"or": ("or3", (1001, 1002, 1003), 500), "weibull": ("weibull", (1011, 1012), 1000)}
GENERATORS = {"or3": or3_instance, "weibull": weibull_instance}


def check_priorities(value: Any, n_bins: int) -> np.ndarray:
    """The candidate's scores as a finite float vector of length ``n_bins``, or InvalidSolution."""
    if value is None or isinstance(value, str | bytes | dict):
        raise InvalidSolution(f"priority() must return an array, got {type(value).__name__}")
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise InvalidSolution(f"priority() did not return an array of numbers ({exc})") from None
    if arr.dtype.kind not in "iuf":
        raise InvalidSolution(f"priority() must return real numbers, got dtype {arr.dtype}")
    if arr.shape != (n_bins,):
        raise InvalidSolution(
            f"priority() returned shape {arr.shape}, expected ({n_bins},): one score per bin"
        )
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise InvalidSolution("priority() returned NaN or infinite scores")
    return arr


def pack(sizes: list[int], capacity: int, priority: Any) -> int:
    """Bins used when ``priority(item, bins) -> scores`` places ``sizes`` online.

    ``priority`` is any callable; ``evaluate`` passes one that goes through the candidate handle.
    """
    remaining = np.zeros(0)
    for size in sizes:
        fits = np.nonzero(remaining >= size)[0]
        bins = np.append(remaining[fits], float(capacity))
        scores = check_priorities(priority(float(size), bins), len(bins))
        choice = int(np.argmax(scores))
        if choice == len(fits):
            remaining = np.append(remaining, float(capacity - size))
        else:
            remaining[fits[choice]] -= size
    return len(remaining)


def excess_pct(spec: tuple[str, tuple[int, ...], int], priority: Any) -> tuple[float, int]:
    """(excess of bins over the L1 bound in %, bins used) over one set of instances."""
    kind, seeds, n_items = spec
    used = lower = 0
    for seed in seeds:
        sizes, capacity = GENERATORS[kind](seed, n_items)
        used += pack(sizes, capacity, priority)
        lower += -(-sum(sizes) // capacity)
    return 100.0 * (used - lower) / lower, used


def combined(excess: float) -> float:
    """Higher is better; 1.0 at the best-known mean excess."""
    return (1.0 + BEST_KNOWN_EXCESS_PCT / 100.0) / (1.0 + excess / 100.0)


def score_heuristic(priority: Any, stage: str = "full") -> dict[str, Any]:
    """Metrics for a priority callable: ``stage1`` (small, quick) or ``full`` (train + held out)."""
    sets = STAGE1_SET if stage == "stage1" else TRAIN_SET
    try:
        or_excess, or_bins = excess_pct(sets["or"], priority)
        weibull_excess, weibull_bins = excess_pct(sets["weibull"], priority)
        metrics: dict[str, Any] = {}
        if stage != "stage1":
            metrics["heldout_or_excess_pct"] = excess_pct(HELDOUT_SET["or"], priority)[0]
            metrics["heldout_weibull_excess_pct"] = excess_pct(HELDOUT_SET["weibull"], priority)[0]
    except InvalidSolution as exc:
        return invalid(str(exc))
    mean = (or_excess + weibull_excess) / 2.0
    return {
        "combined_score": combined(mean),
        "validity": 1.0,
        "excess_pct": mean,
        "or_excess_pct": or_excess,
        "weibull_excess_pct": weibull_excess,
        "or_bins": or_bins,
        "weibull_bins": weibull_bins,
        **metrics,
    }


def _remote(candidate: Any):
    def priority(item: float, bins: np.ndarray) -> Any:
        return candidate.call(ENTRY_POINT, item, bins)

    return priority


def evaluate_stage1(candidate: Any) -> dict[str, Any]:
    """Quick screen: one small OR3 and one small Weibull instance."""
    return score_heuristic(_remote(candidate), stage="stage1")


def evaluate_stage2(candidate: Any) -> dict[str, Any]:
    """Full score on the training instances, plus the held-out metrics."""
    return score_heuristic(_remote(candidate), stage="full")


def evaluate(candidate: Any) -> dict[str, Any]:
    """Without a cascade: the full score."""
    return evaluate_stage2(candidate)
