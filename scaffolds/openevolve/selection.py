"""``three_tier_explore_exploit``: OpenEvolve 0.4.0's ``sample_from_island`` as a policy.

- Islands in round-robin: iteration ``i`` samples island ``(i - 1) % num_islands`` (the
  reference's parallel controller submits iterations to islands 0, 1, … in turn), and its child
  is placed on that island (the ``island`` tag).
- One draw ``r``: ``r < exploration_ratio`` a uniform island member (*exploration*);
  ``r < exploration_ratio + exploitation_ratio`` a uniform archive member, preferring those on
  the island (*exploitation*; an empty archive falls to the weighted tier); else a draw from the
  island weighted by ``max(fitness, 0.001)`` (*weighted*; no draw for a one-program island).
- An empty island falls back to the reference's legacy ``sample()`` on island 0 (its parallel
  controller never moves ``current_island``): the same ratios, but the exploitation tier prefers
  island 0's archive members and the third tier is uniform over every program.
- Inspirations, at most ``num_inspirations``, all from the sampling island: its best (unless it
  is the parent), its top ``max(1, int(n * elite_selection_ratio))``; then, when the island has
  more than ``n`` programs, programs of cells near the parent's (``(n - have) * 3`` tries of a
  ±2 step per dimension), and a uniform sample of the rest to fill.

Every draw comes from the policy's own seeded RNG, in the reference's order.
"""

from __future__ import annotations

import random
from typing import Any

from pydantic import Field, model_validator

from harness.core.population import BasePopulation
from harness.core.records import Program, Selection
from harness.core.selection import BaseSelectionPolicy
from harness.core.validation import StrictModel
from scaffolds.openevolve.population import MapElitesIslandsPopulation

__all__ = ["ThreeTierConfig", "ThreeTierPolicy"]

#: The island the reference's legacy sampler uses in parallel mode.
LEGACY_ISLAND = 0


class ThreeTierConfig(StrictModel):
    #: P(uniform island member as parent).
    exploration_ratio: float = Field(0.2, ge=0.0, le=1.0)
    #: P(archive member as parent); the rest is the fitness-weighted tier.
    exploitation_ratio: float = Field(0.7, ge=0.0, le=1.0)
    #: Share of the inspirations taken from the island's top programs.
    elite_selection_ratio: float = Field(0.1, ge=0.0, le=1.0)
    #: Inspirations per prompt (the card's 3; OpenEvolve 0.4.0 uses num_diverse_programs = 2).
    num_inspirations: int = Field(3, ge=0)
    #: Diverse programs the prompt samples from the island's next-best (num_diverse_programs);
    #: read by the openevolve_template prompt, kept here where the card names it.
    num_diverse: int = Field(2, ge=0)

    @model_validator(mode="after")
    def _ratios(self) -> ThreeTierConfig:
        if self.exploration_ratio + self.exploitation_ratio > 1.0 + 1e-9:
            raise ValueError(
                "exploration_ratio + exploitation_ratio must be at most 1 (the rest is the "
                f"weighted tier), got {self.exploration_ratio} + {self.exploitation_ratio}"
            )
        return self


class ThreeTierPolicy(BaseSelectionPolicy):
    def __init__(
        self, rng: random.Random, config: ThreeTierConfig, population: MapElitesIslandsPopulation
    ) -> None:
        super().__init__(rng)
        self.config = config
        self.population = population

    def select(self, population: BasePopulation, iteration: int) -> Selection:
        pop = self.population
        if len(pop) == 0:
            return Selection(parent=None, info={"reason": "empty population: from scratch"})
        island = (max(iteration, 1) - 1) % len(pop.islands)
        kinds: list[str] = []
        if pop.islands[island]:
            parent, tier = self._sample_island(island)
            inspirations = self._inspirations(parent, island, kinds)
            fallback = False
        else:
            parent, tier = self._sample_legacy()
            home = pop.island_of(parent.id)
            inspirations = self._inspirations(
                parent, LEGACY_ISLAND if home is None else home, kinds
            )
            fallback = True
        info: dict[str, Any] = {
            "island": island,
            "tier": tier,
            "inspiration_kinds": kinds,
            "parent_island": pop.island_of(parent.id),
        }
        if fallback:
            info["fallback"] = "empty island: legacy sample() on island 0"
        return Selection(
            parent=parent,
            inspirations=tuple(inspirations),
            info=info,
            tags={"island": island, "mode": tier},
        )

    # -- parent tiers -------------------------------------------------------------------------
    def _sample_island(self, island: int) -> tuple[Program, str]:
        cfg = self.config
        r = self.rng.random()
        if r < cfg.exploration_ratio:
            return self._uniform_island(island), "exploration"
        if r < cfg.exploration_ratio + cfg.exploitation_ratio:
            return self._archive_for(island, fallback_weighted=True), "exploitation"
        return self._weighted_island(island), "weighted"

    def _sample_legacy(self) -> tuple[Program, str]:
        cfg = self.config
        r = self.rng.random()
        if r < cfg.exploration_ratio:
            return self._uniform_island(LEGACY_ISLAND), "exploration"
        if r < cfg.exploration_ratio + cfg.exploitation_ratio:
            return self._archive_for(LEGACY_ISLAND, fallback_weighted=False), "exploitation"
        return self._uniform_all(), "random"

    def _uniform_all(self) -> Program:
        return self.rng.choice(list(self.population.programs()))

    def _uniform_island(self, island: int) -> Program:
        members = self.population.island_members(island)
        if not members:  # only the legacy path reaches an empty island; see the README
            return self._uniform_all()
        return self.rng.choice(members)

    def _archive_for(self, island: int, *, fallback_weighted: bool) -> Program:
        pop = self.population
        archived = pop.archive_members()
        if not archived:
            if fallback_weighted:
                return self._weighted_island(island)
            return self._uniform_island(island)
        here = [p for p in archived if pop.island_of(p.id) == island]
        return self.rng.choice(here or archived)

    def _weighted_island(self, island: int) -> Program:
        pop = self.population
        members = pop.island_members(island)
        if not members:
            return self._uniform_all()
        if len(members) == 1:
            return members[0]
        weights = [max(pop.fitness(p), 0.001) for p in members]
        total = sum(weights)
        if total > 0:
            weights = [w / total for w in weights]
        else:
            weights = [1.0 / len(members)] * len(members)
        return self.rng.choices(members, weights=weights, k=1)[0]

    # -- inspirations ---------------------------------------------------------------------------
    def _inspirations(self, parent: Program, island: int, kinds: list[str]) -> list[Program]:
        pop = self.population
        n = self.config.num_inspirations
        ids = list(pop.islands[island])
        members = pop.island_members(island)
        if not members:
            return []
        chosen: list[Program] = []
        best = pop.valid_island_best(island)
        if best is not None and best != parent.id:
            chosen.append(pop.get(best) or parent)
            kinds.append("island_best")
        top_n = max(1, int(n * self.config.elite_selection_ratio))
        for program in pop.island_top(island, top_n):
            if program.id != parent.id and all(p.id != program.id for p in chosen):
                chosen.append(program)
                kinds.append("elite")
        if len(members) > n and len(chosen) < n:
            extra = self._nearby(parent, ids, chosen, n - len(chosen), kinds)
            if len(chosen) + len(extra) < n:
                taken = {parent.id, *(p.id for p in chosen), *(p.id for p in extra)}
                free = [pid for pid in ids if pid not in taken and pid in pop]
                if free:
                    picked = self.rng.sample(free, min(n - len(chosen) - len(extra), len(free)))
                    extra.extend(pop.get(pid) or parent for pid in picked)
                    kinds.extend("random" for _ in picked)
            chosen.extend(extra)
        del kinds[n:]
        return chosen[:n]

    def _nearby(
        self,
        parent: Program,
        ids: list[str],
        chosen: list[Program],
        slots: int,
        kinds: list[str],
    ) -> list[Program]:
        pop = self.population
        coords = pop.coordinates(parent)
        cells: dict[str, str] = {}
        for pid in ids:
            program = pop.get(pid)
            if program is not None:
                cells[pop.cell_key(pop.coordinates(program))] = pid
        found: list[Program] = []
        top = pop.feature_bins - 1
        for _ in range(slots * 3):
            moved = [max(0, min(top, c + self.rng.randint(-2, 2))) for c in coords]
            owner = cells.get(pop.cell_key(moved))
            if (
                owner is not None
                and owner != parent.id
                and all(p.id != owner for p in chosen)
                and all(p.id != owner for p in found)
                and owner in pop
            ):
                found.append(pop.get(owner) or parent)
                kinds.append("nearby")
                if len(found) >= slots:
                    break
        return found
