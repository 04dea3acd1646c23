"""One island's quality-diversity archive: k-NN code-distance novelty, elite scores, protected
elites and crowding admission (SkyDiscover's ``UnifiedArchive`` in scalar mode).

- Fitness inside an archive follows the reference's chain (:func:`archive_fitness`); the
  database side (exploitation parents, global context, adaptive state) uses the proxy score
  (:func:`proxy_fitness`).  Both equal ``combined_score`` whenever a task reports one.
- Elite score = ``(fitness_weight + pareto_weight)·fitness percentile + novelty_weight·novelty
  percentile``; novelty = mean distance to the ``k`` nearest members.
- Admission below capacity is unconditional.  At capacity the newcomer competes with the most
  similar *unprotected* member (protected: the top ``max(1, int(n·elite_ratio))`` by elite
  score, plus the fittest member) and replaces it only with a strictly greater elite score.
- Members keep admission order (an eviction frees a slot, the newcomer goes last), which the
  roulette and every stable sort read.
- Genealogy (parent → children) is kept for the admitted members only; it feeds the prompt's
  sibling section.
- The code distances between members are kept (each pair computed once, when the later of the
  two is admitted; :func:`code_distance` is symmetric to the bit), for archives of up to
  :data:`DISTANCE_CACHE_LIMIT` members: the novelty refresh after an admission, the crowding's
  most similar member and the context's most distant ones read them instead of comparing the
  codes again.
- The members ranked by archive fitness and by proxy fitness (stable sorts, best first) are
  kept until the members change.
"""

from __future__ import annotations

import math
import numbers
import random
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from harness.core.records import Program
from harness.core.scoring import number

__all__ = [
    "Admission",
    "ArchiveWeights",
    "IslandArchive",
    "archive_fitness",
    "code_distance",
    "proxy_fitness",
]

_FITNESS_KEYS = ("score", "fitness", "accuracy", "reward")
#: Largest capacity whose pairwise member distances are kept (n² floats; the reference's 20).
DISTANCE_CACHE_LIMIT = 256


def archive_fitness(program: Program) -> float:
    """``combined_score``, else ``score``/``fitness``/``accuracy``/``reward``, else the first
    numeric metric, else 0 (bools and NaN are not numbers here)."""
    metrics = program.metrics
    for key in ("combined_score", *_FITNESS_KEYS):
        value = number(metrics.get(key))
        if value is not None:
            return value
    for value in metrics.values():
        f = number(value)
        if f is not None:
            return f
    return 0.0


def proxy_fitness(program: Program) -> float:
    """The database's scalar: ``-inf`` without metrics, else a numeric ``combined_score``, else
    the program's score (the reference's ``get_score``)."""
    if not program.metrics:
        return float("-inf")
    value = program.metrics.get("combined_score")
    if type(value) is float:  # the common case, without the ABC's isinstance
        return value
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return float(value)
    return program.score


_TOKEN = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*|[0-9]+\.?[0-9]*")
_IMPORT = re.compile(r"(?:from\s+(\S+)\s+)?import\s+(\S+)")
_DEF = re.compile(r"def\s+([a-zA-Z_][a-zA-Z0-9_]*)\s*\(")
_CLASS = re.compile(r"class\s+([a-zA-Z_][a-zA-Z0-9_]*)\s*[:\(]")
_CALL = re.compile(r"([a-zA-Z_][a-zA-Z0-9_]*(?:\.[a-zA-Z_][a-zA-Z0-9_]*)+)\s*\(")
_PATTERNS = (
    ("for ", "for_loop"),
    ("while ", "while_loop"),
    ("try:", "try_except"),
    ("try :", "try_except"),
    ("with ", "context_manager"),
    ("yield ", "generator"),
    ("async ", "async"),
    ("await ", "async"),
    ("lambda ", "lambda"),
)


@lru_cache(maxsize=4096)
def _signature(code: str) -> tuple[frozenset[str], frozenset[str]]:
    """(identifier/number tokens of two or more characters, structural features) of ``code``;
    cached because every archive operation compares the same few dozen programs."""
    tokens = frozenset(t for t in _TOKEN.findall(code) if len(t) >= 2)
    features: set[str] = set()
    for module, name in _IMPORT.findall(code):
        if module:
            features.add(f"import:{module}")
        features.add(f"import:{name.split('.')[0]}")
    features.update(f"func:{f}" for f in _DEF.findall(code))
    features.update(f"class:{c}" for c in _CLASS.findall(code))
    features.update(f"call:{c}" for c in _CALL.findall(code))
    features.update(f"pattern:{name}" for needle, name in _PATTERNS if needle in code)
    return tokens, frozenset(features)


def _jaccard_distance(a: frozenset[str], b: frozenset[str]) -> float:
    common = len(a & b)
    union = len(a) + len(b) - common  # len(a | b), without building the union
    return 0.0 if union == 0 else 1.0 - common / union


def code_distance(a: str, b: str) -> float:
    """0.5·token Jaccard + 0.3·feature Jaccard + 0.2·relative length difference (0 if equal)."""
    if a == b:
        return 0.0
    tokens_a, features_a = _signature(a)
    tokens_b, features_b = _signature(b)
    longest = max(len(a), len(b), 1)
    return (
        0.5 * _jaccard_distance(tokens_a, tokens_b)
        + 0.3 * _jaccard_distance(features_a, features_b)
        + 0.2 * abs(len(a) - len(b)) / longest
    )


@dataclass(frozen=True)
class ArchiveWeights:
    """An island's elite-score weights (the config's, or a spawn preset's)."""

    fitness_weight: float = 1.0
    novelty_weight: float = 0.0
    pareto_weight: float = 0.4
    elite_ratio: float = 0.2


@dataclass(frozen=True)
class Admission:
    """What :meth:`IslandArchive.add` did: whether the program is now a member, and the member
    it displaced (crowding at capacity), if any."""

    admitted: bool
    evicted: str | None = None


class IslandArchive:
    def __init__(self, capacity: int, k_neighbors: int, weights: ArchiveWeights) -> None:
        self.capacity = capacity
        self.k_neighbors = k_neighbors
        self.weights = weights
        self._members: dict[str, Program] = {}
        self._children: dict[str, list[str]] = {}
        self._elite: dict[str, float] = {}
        self._novelty: dict[str, float] = {}
        self._valid = False
        #: The members by archive fitness and by proxy fitness, best first (None: to sort).
        self._ranked: list[Program] | None = None
        self._ranked_proxy: list[Program] | None = None
        #: The members' archive fitness values, ascending (None: to sort).
        self._fitness_ascending: list[float] | None = None
        #: :meth:`protected_ids` since the last refresh (None: to compute).
        self._protected: set[str] | None = None
        #: member id -> {other member id: code distance}; None above the cache limit.
        self._dist: dict[str, dict[str, float]] | None = (
            {} if capacity <= DISTANCE_CACHE_LIMIT else None
        )

    # -- reading ----------------------------------------------------------------------------
    def members(self) -> list[Program]:
        return list(self._members.values())

    def __len__(self) -> int:
        return len(self._members)

    def __contains__(self, program_id: object) -> bool:
        return program_id in self._members

    def ranked(self) -> list[Program]:
        """Every member by archive fitness, best first (stable); the kept list: do not change."""
        if self._ranked is None:
            self._ranked = sorted(self._members.values(), key=archive_fitness, reverse=True)
        return self._ranked

    def ranked_by_proxy(self) -> list[Program]:
        """Every member by :func:`proxy_fitness`, best first (stable); the kept list: do not
        change."""
        if self._ranked_proxy is None:
            self._ranked_proxy = sorted(self._members.values(), key=proxy_fitness, reverse=True)
        return self._ranked_proxy

    def top(self, n: int | None = None) -> list[Program]:
        """By archive fitness, best first (stable); ``None``: the top ~20% (1 to 10)."""
        ranked = self.ranked()
        if n is None:
            n = max(1, min(10, len(ranked) // 5))
        return ranked[:n]

    def children(self, program_id: str) -> list[Program]:
        """Admitted children of ``program_id`` still in this archive, oldest first."""
        return [self._members[c] for c in self._children.get(program_id, ()) if c in self._members]

    def elite_scores(self) -> dict[str, float]:
        self._refresh()
        return dict(self._elite)

    def novelty_scores(self) -> dict[str, float]:
        self._refresh()
        return dict(self._novelty)

    # -- admission --------------------------------------------------------------------------
    def add(self, program: Program) -> Admission:
        """Admit ``program`` (crowding at capacity): whether it is now a member, and whom it
        displaced."""
        if program.id in self._members:
            return Admission(False)
        if len(self._members) < self.capacity:
            self._insert(program)
            return Admission(True)
        self._refresh()
        distances = self._distances_to(program)
        victim = self._most_similar_unprotected(program, distances)
        if victim is None:
            return Admission(False)
        if self._newcomer_elite_score(program, distances) > self._elite.get(victim, 0.0):
            self._evict(victim)
            self._insert(program, distances)
            return Admission(True, victim)
        return Admission(False)

    def newcomer_elite_score(self, program: Program) -> float:
        """The elite score ``program`` would have against the current members."""
        return self._newcomer_elite_score(program, self._distances_to(program))

    def _newcomer_elite_score(self, program: Program, distances: dict[str, float]) -> float:
        w = self.weights
        members = list(self._members.values())
        n = len(members)
        if n == 0:
            return w.fitness_weight + w.novelty_weight + w.pareto_weight
        fitness = archive_fitness(program)
        if self._fitness_ascending is None:
            self._fitness_ascending = sorted(archive_fitness(p) for p in members)
        # members strictly fitter (archive fitness is never NaN)
        better = n - bisect_right(self._fitness_ascending, fitness)
        if n == 1:
            fitness_pct = 1.0 if better == 0 else 0.0
        else:
            fitness_pct = min(1.0, max(0.0, 1.0 - better / (n - 1)))
        novelty = self._novelty_from(distances, program.id)
        self._refresh()
        existing = [self._novelty.get(p.id, 0.0) for p in members]
        novelty_pct = sum(1 for v in existing if v < novelty) / n
        return (w.fitness_weight + w.pareto_weight) * fitness_pct + w.novelty_weight * novelty_pct

    def protected_ids(self) -> set[str]:
        self._refresh()
        if self._protected is None:
            self._protected = self._compute_protected()
        return set(self._protected)

    def _compute_protected(self) -> set[str]:
        protected: set[str] = set()
        if self._elite:
            count = max(1, int(len(self._members) * self.weights.elite_ratio))
            ranked = sorted(self._elite, key=lambda pid: self._elite[pid], reverse=True)
            protected.update(ranked[:count])
        if self._members:  # the first fittest in member order (archive fitness is never NaN)
            protected.add(self.ranked()[0].id)
        return protected

    def _most_similar_unprotected(
        self, program: Program, distances: dict[str, float]
    ) -> str | None:
        protected = self.protected_ids()
        best_id, best_dist = None, math.inf
        for pid in self._members:
            if pid in protected:
                continue
            dist = distances[pid]
            if dist < best_dist:
                best_id, best_dist = pid, dist
        return best_id

    def _insert(self, program: Program, distances: dict[str, float] | None = None) -> None:
        cache = self._dist
        if cache is not None:
            if distances is None:
                row = self._distances_to(program)
            else:  # measured before an eviction: the members' only
                row = {pid: distances[pid] for pid in self._members}
            for pid, d in row.items():
                cache[pid][program.id] = d
            cache[program.id] = row
        self._members[program.id] = program
        self._ranked = self._ranked_proxy = self._fitness_ascending = None
        if program.parent_id:
            self._children.setdefault(program.parent_id, []).append(program.id)
        self._valid = False

    def _evict(self, program_id: str) -> None:
        del self._members[program_id]
        self._ranked = self._ranked_proxy = self._fitness_ascending = None
        if self._dist is not None:
            for pid in self._dist.pop(program_id):
                del self._dist[pid][program_id]
        for parent, kids in list(self._children.items()):
            if program_id in kids:
                kids.remove(program_id)
                if not kids:
                    del self._children[parent]
        self._children.pop(program_id, None)
        self._valid = False

    # -- sampling ---------------------------------------------------------------------------
    def sample_parent(self, mode: str, rng: random.Random) -> Program:
        """``exploitation``: uniform among :meth:`top`; ``exploration``: novelty roulette
        (floor 0.001); anything else: a coin between the two."""
        self._refresh()
        members = list(self._members.values())
        if mode == "exploitation":
            return rng.choice(self.top() or members)
        if mode == "exploration":
            weights = [max(self._novelty.get(p.id, 0.0), 0.001) for p in members]
            r = rng.random() * sum(weights)
            cumulative = 0.0
            for program, weight in zip(members, weights, strict=True):
                cumulative += weight
                if cumulative >= r:
                    return program
            return members[-1]
        if rng.random() < 0.5:
            return self.sample_parent("exploitation", rng)
        return self.sample_parent("exploration", rng)

    def most_distant(self, parent: Program, n: int, top_ratio: float = 0.5) -> list[Program]:
        """Up to ``n`` members among the fittest ``max(2n, int(size·top_ratio))``, the parent
        left out, farthest from the parent first (stable)."""
        if not self._members or n <= 0:
            return []
        ranked = self.ranked()
        pool = ranked[: max(2 * n, int(len(ranked) * top_ratio))]
        row = self._dist.get(parent.id) if self._dist is not None else None
        if row is not None and self._members.get(parent.id) is parent:
            scored = [(p, row[p.id]) for p in pool if p.id != parent.id]
        else:
            scored = [(p, code_distance(parent.code, p.code)) for p in pool if p.id != parent.id]
        scored.sort(key=lambda item: -item[1])
        return [p for p, _ in scored[:n]]

    # -- caches -----------------------------------------------------------------------------
    def _distances_to(self, program: Program) -> dict[str, float]:
        """Member id -> code distance to ``program`` (itself included when a member: 0), in
        member order; a member's own row from the cache."""
        if self._dist is not None and self._members.get(program.id) is program:
            row = self._dist[program.id]
            return {pid: row[pid] if pid != program.id else 0.0 for pid in self._members}
        code = program.code
        return {pid: code_distance(code, m.code) for pid, m in self._members.items()}

    def _novelty_from(self, distances: Mapping[str, float], program_id: str) -> float:
        """Mean of the ``k`` smallest distances to the other members (1 with none)."""
        nearest = sorted(d for pid, d in distances.items() if pid != program_id)
        nearest = nearest[: min(self.k_neighbors, len(nearest))]
        return sum(nearest) / len(nearest) if nearest else 1.0

    def _novelty_of(self, program: Program, members: Iterable[Program]) -> float:
        distances = sorted(
            code_distance(program.code, o.code) for o in members if o.id != program.id
        )
        nearest = distances[: min(self.k_neighbors, len(distances))]
        return sum(nearest) / len(nearest) if nearest else 1.0

    def _refresh(self) -> None:
        if self._valid:
            return
        members = list(self._members.values())
        n = len(members)
        rank = {p.id: i for i, p in enumerate(self.ranked())}
        cache = self._dist
        if cache is not None:
            self._novelty = {p.id: self._novelty_from(cache[p.id], p.id) for p in members}
        else:
            self._novelty = {p.id: self._novelty_of(p, members) for p in members}
        self._protected = None
        ordered = sorted(self._novelty.values())
        w = self.weights
        self._elite = {}
        for p in members:
            fitness_pct = 1.0 - rank[p.id] / max(n - 1, 1)
            novelty = self._novelty[p.id]
            # members with a strictly smaller novelty
            novelty_pct = bisect_left(ordered, novelty) / max(len(ordered), 1)
            self._elite[p.id] = (
                w.fitness_weight + w.pareto_weight
            ) * fitness_pct + w.novelty_weight * novelty_pct
        self._valid = True

    # -- checkpoint -------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {
            "members": list(self._members),
            "children": {k: list(v) for k, v in self._children.items()},
        }

    def load_state_dict(self, state: Mapping[str, Any], programs: Mapping[str, Program]) -> None:
        members = [programs[pid] for pid in state["members"]]
        self._members = {}
        self._ranked = self._ranked_proxy = self._fitness_ascending = None
        if self._dist is not None:
            self._dist = {}
        for program in members:  # the distances as the members arrived
            self._insert(program)
        self._children = {k: list(v) for k, v in state["children"].items()}
        self._valid = False
