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

**Reference mode** (``loop.reference_mode``) reproduces OpenEvolve 0.4.0's process-pool
schedule as well, for a run that can be compared with the reference draw for draw:

- the population and the policy draw from one stream seeded with the run seed (the reference's
  global ``random`` after ``random.seed(random_seed)``);
- parents are sampled when the reference *submits* an iteration, not when it starts: first
  ``min(max_iterations, num_islands * max(1, 2 * workers // num_islands))`` iterations at once
  from the seed-only database, round the islands; then one per completed iteration, on the first
  island with fewer than ``max(1, 2 * workers // num_islands)`` iterations in flight (``workers``
  is OpenEvolve's ``evaluator.parallel_evaluations``).  Each sample keeps its island as it was
  then, which the prompt shows (the reference's worker gets a database snapshot);
- the prompt's own draws (diverse programs, template variations) come from a copy of the stream
  taken right after the first sample: the reference's worker process is forked at the first
  submission and draws from its own copy of ``random``.

With one worker the reference completes iterations in submission order, so this schedule is
exactly its; with more it is one of the orders the reference may take.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from itertools import accumulate, repeat
from operator import truediv
from typing import Any

from pydantic import Field, model_validator

from harness.core.block import Step
from harness.core.blocks import block
from harness.core.config import GeneralConfig, LoopConfig
from harness.core.population import PopulationView
from harness.core.records import Program, Selection
from harness.core.rng import rng_from_state, rng_state
from harness.core.selection import BaseSelectionPolicy
from harness.core.validation import StrictModel
from scaffolds.openevolve.population import MapElitesIslandsPopulation
from scaffolds.openevolve.roster import Roster, Without

__all__ = ["ThreeTierConfig", "ThreeTierPolicy"]

#: The island the reference's legacy sampler uses in parallel mode.
LEGACY_ISLAND = 0


def _step_draw(rng: random.Random) -> Callable[[], int]:
    """``rng.randint(-2, 2)`` as one call: ``randrange`` draws ``_randbelow(5)``, which takes
    3 bits per try until one is below 5 (the draws, and so the RNG's state, are the same)."""
    plain = getattr(random.Random, "_randbelow_with_getrandbits", None)
    if plain is None or getattr(type(rng), "_randbelow", None) is not plain:
        return lambda: rng.randint(-2, 2)  # an RNG of another kind: ask it
    bits = rng.getrandbits

    def step() -> int:
        r = bits(3)
        while r >= 5:
            r = bits(3)
        return r - 2

    return step


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
    #: OpenEvolve's worker processes (``evaluator.parallel_evaluations``): in reference mode
    #: they set how many iterations it samples ahead (see the module docstring).
    workers: int = Field(1, ge=1, le=256)

    @model_validator(mode="after")
    def _ratios(self) -> ThreeTierConfig:
        if self.exploration_ratio + self.exploitation_ratio > 1.0 + 1e-9:
            raise ValueError(
                "exploration_ratio + exploitation_ratio must be at most 1 (the rest is the "
                f"weighted tier), got {self.exploration_ratio} + {self.exploitation_ratio}"
            )
        return self


@dataclass
class _Sampled:
    """One iteration sampled ahead (reference mode), with its island as it was then."""

    selection: Selection
    context: list[Program] = field(default_factory=list)


class ThreeTierPolicy(BaseSelectionPolicy):
    unsupported_loop = {
        ("reference_mode", "resample_each_attempt"): "in reference mode it samples each "
        "iteration once, ahead, on OpenEvolve's schedule, so a later attempt would get the same "
        "parent again, not a new one"
    }

    def __init__(
        self,
        rng: random.Random,
        config: ThreeTierConfig,
        population: MapElitesIslandsPopulation,
        *,
        reference_mode: bool = False,
        max_iterations: int = 0,
    ) -> None:
        super().__init__(rng)
        self.config = config
        self.population = population
        self.reference_mode = reference_mode
        self.max_iterations = max_iterations
        islands = len(population.islands)
        batch = min(2 * config.workers, max_iterations)
        #: Iterations in flight per island (the reference's ``batch_per_island``).
        self.per_island = max(1, batch // islands) if batch > 0 else 0
        self._ahead: dict[int, _Sampled] = {}
        self._pending: dict[int, list[int]] = {i: [] for i in range(islands)}
        self._next = 1
        self._worker: random.Random | None = None

    async def select(self, population: PopulationView, step: Step) -> Selection:
        iteration = step.iteration
        if not self.reference_mode or len(self.population) == 0:
            return self._select(iteration, (max(iteration, 1) - 1) % len(self.population.islands))
        self._schedule(iteration)
        return self._ahead[iteration].selection

    # -- the reference's submission schedule (reference mode) ---------------------------------
    def _schedule(self, iteration: int) -> None:
        """Sample as the reference submits: the first batch at once, then one iteration per
        completed one (every iteration before ``iteration`` has completed by now)."""
        if self._next == 1:
            for island in range(len(self.population.islands)):
                for _ in range(self.per_island):
                    if self._next <= self.max_iterations:
                        self._submit(island)
        for done in [i for i in self._ahead if i < iteration]:
            del self._ahead[done]
            for queue in self._pending.values():
                if done in queue:
                    queue.remove(done)
            for island, queue in self._pending.items():
                if len(queue) < self.per_island and self._next <= self.max_iterations:
                    self._submit(island)
                    break
        if iteration not in self._ahead:  # past the planned iterations (resume --iterations)
            self._next = max(self._next, iteration)
            self._submit(min(self._pending, key=lambda i: len(self._pending[i])))

    def _submit(self, island: int) -> None:
        iteration = self._next
        selection = self._select(iteration, island)
        parent = selection.parent
        assert parent is not None
        home = self.population.island_of(parent.id)
        context = self.population.island_members(0 if home is None else home)
        self._ahead[iteration] = _Sampled(selection, context)
        self._pending[island].append(iteration)
        self._next += 1
        if self._worker is None:  # the reference forks its worker at the first submission
            self._worker = random.Random()
            self._worker.setstate(self.rng.getstate())

    # -- what the prompt reads ----------------------------------------------------------------
    def sampled_context(self, iteration: int) -> list[Program] | None:
        """The parent's island as it was when iteration ``iteration`` was sampled (``None``:
        the prompt reads the live population)."""
        sampled = self._ahead.get(iteration)
        return list(sampled.context) if sampled is not None else None

    def prompt_rng(self) -> random.Random | None:
        """The stream the prompt's draws come from (``None``: a per-prompt seeded RNG)."""
        return self._worker if self.reference_mode else None

    # -- sampling -------------------------------------------------------------------------------
    def _select(self, iteration: int, island: int) -> Selection:
        pop = self.population
        if len(pop) == 0:
            return Selection(parent=None, info={"reason": "empty population: from scratch"})
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

    # -- checkpoint -----------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        state = super().state_dict()
        if self.reference_mode:
            state["ahead"] = {
                str(i): {
                    "parent": s.selection.parent.id if s.selection.parent else None,
                    "inspirations": [p.id for p in s.selection.inspirations],
                    "info": dict(s.selection.info),
                    "tags": dict(s.selection.tags),
                    "context": [p.id for p in s.context],
                }
                for i, s in self._ahead.items()
            }
            state["pending"] = {str(k): list(v) for k, v in self._pending.items()}
            state["next"] = self._next
            state["worker"] = rng_state(self._worker) if self._worker is not None else None
        return state

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        super().load_state_dict(state)
        if not self.reference_mode:
            return
        find = self.population.lookup
        self._ahead = {}
        for key, item in state.get("ahead", {}).items():
            parent = find(item["parent"]) if item["parent"] else None
            selection = Selection(
                parent=parent,
                inspirations=tuple(find(pid) for pid in item["inspirations"]),
                info=item["info"],
                tags=item["tags"],
            )
            self._ahead[int(key)] = _Sampled(selection, [find(pid) for pid in item["context"]])
        self._pending = {int(k): list(v) for k, v in state.get("pending", {}).items()}
        self._next = int(state.get("next", 1))
        worker = state.get("worker")
        self._worker = rng_from_state(random.Random(), worker) if worker is not None else None

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

    # A roster is a sequence of ids: the RNG reads only the positions it draws, and draws what
    # it would from the list of the island's members.
    def _uniform_all(self) -> Program:
        pop = self.population
        return pop.lookup(self.rng.choice(pop.member_ids()))

    def _uniform_island(self, island: int) -> Program:
        pop = self.population
        members = pop.islands[island]
        if not members:  # only the legacy path reaches an empty island; see the README
            return self._uniform_all()
        return pop.lookup(self.rng.choice(members))

    def _archive_for(self, island: int, *, fallback_weighted: bool) -> Program:
        pop = self.population
        archived, here = pop.archive_ids(island)  # archive_members' ids; those on the island
        if not archived:
            if fallback_weighted:
                return self._weighted_island(island)
            return self._uniform_island(island)
        return pop.lookup(self.rng.choice(here or archived))

    def _weighted_island(self, island: int) -> Program:
        pop = self.population
        members = pop.islands[island]
        if not members:
            return self._uniform_all()
        if len(members) == 1:
            return pop.lookup(members[0])
        # Weights max(fitness, 0.001) (a NaN stays NaN, as max keeps its first argument): the
        # roster's values.  Normalised and accumulated in C: ``choices(weights=w)`` accumulates
        # ``w`` itself, so ``cum_weights`` of the same sums draws the same member.
        weights = members.values()
        total = sum(weights)
        if total > 0:
            cumulative = list(accumulate(map(truediv, weights, repeat(total))))
            return pop.lookup(self.rng.choices(members, cum_weights=cumulative, k=1)[0])
        weights = [1.0 / len(members)] * len(members)
        return pop.lookup(self.rng.choices(members, weights=weights, k=1)[0])

    # -- inspirations ---------------------------------------------------------------------------
    def _inspirations(self, parent: Program, island: int, kinds: list[str]) -> list[Program]:
        pop = self.population
        n = self.config.num_inspirations
        ids = pop.islands[island]
        size = pop.island_size(island)
        if not size:
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
        if size > n and len(chosen) < n:
            extra = self._nearby(parent, island, ids, chosen, n - len(chosen), kinds)
            if len(chosen) + len(extra) < n:
                taken = {parent.id, *(p.id for p in chosen), *(p.id for p in extra)}
                free = Without(ids, taken)  # every id on an island is a member
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
        island: int,
        ids: Roster,
        chosen: list[Program],
        slots: int,
        kinds: list[str],
    ) -> list[Program]:
        pop = self.population
        coords = pop.coordinates(parent)
        cells = pop.nearby_cells(island, ids)
        found: list[Program] = []
        top = pop.feature_bins - 1
        step = _step_draw(self.rng)
        for _ in range(slots * 3):
            moved = [max(0, min(top, c + step())) for c in coords]
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


@block(
    "three_tier_explore_exploit",
    "Round-robin islands; parent by explore / exploit (archive) / fitness-weighted tiers; "
    "inspirations from the island's best, top, nearby cells and random fill.",
)
def three_tier(
    config: ThreeTierConfig,
    *,
    rng: random.Random,
    population: MapElitesIslandsPopulation,
    loop: LoopConfig,
    general: GeneralConfig,
) -> ThreeTierPolicy:
    """In reference mode the policy draws from the population's stream (the reference's one
    global ``random``)."""
    return ThreeTierPolicy(
        population.rng if loop.reference_mode else rng,
        config,
        population,
        reference_mode=loop.reference_mode,
        max_iterations=general.max_iterations,
    )
