"""``AdaEvolvePolicy``: G-intensity parent sampling on the UCB-chosen island, and the
end-of-iteration schedule (seed copies, spawn, next island, migration).

One RNG serves every draw in the reference's order (audit §3.1.4): ``select`` draws the mode,
then the parent (a choice, a roulette, or a coin and one of those); ``end_iteration`` draws
the spawn preset and the min-visits island.  The context draws nothing.

Per iteration (``end_iteration``, failed iterations included): spawn an island when global
productivity is below the threshold (cooldown, cap), then pick the next island (UCB or
round-robin), then migrate when ``iteration % migration_interval == 0`` — so migrants that land
on the island just picked count as its own evaluations, as in the reference.  Iteration 0 (the
seed) only copies the seed to the empty islands as external improvements.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from pydantic import Field, model_validator

from harness.core.block import Step
from harness.core.blocks import block
from harness.core.population import PopulationView
from harness.core.records import IterationOutcome, Program, Selection
from harness.core.rng import rng_from_state, rng_state
from harness.core.selection import BaseSelectionPolicy
from harness.core.validation import StrictModel
from scaffolds.adaevolve.adaptive import IslandBandit
from scaffolds.adaevolve.archive import proxy_fitness
from scaffolds.adaevolve.memory import ParadigmMemory
from scaffolds.adaevolve.population import PRESETS, AdaEvolveArchipelago

__all__ = ["EXPLOIT_LABEL", "EXPLORE_LABEL", "AdaEvolvePolicy", "AdaEvolvePolicyConfig"]

EXPLORE_LABEL = (
    "## How this parent was chosen: exploration\n"
    "It was drawn for its novelty, to open up a different part of the search space. Feel free "
    "to depart from its approach: a different algorithm or technique that could beat the "
    "current solutions is welcome, as long as the result stays correct."
)
EXPLOIT_LABEL = (
    "## How this parent was chosen: exploitation\n"
    "It is one of the best programs found so far. Improve it: refine what it does or replace "
    "parts with a better algorithm, data structure or library, keeping it correct."
)
#: Spawned islands' seed copies (top programs overall).
SPAWN_SEEDS = 5


class AdaEvolvePolicyConfig(StrictModel):
    #: ρ of G, of the UCB rewards and of the decayed visits.
    decay: float = Field(0.9, ge=0.0, le=1.0)
    intensity_min: float = Field(0.15, ge=0.0, le=1.0)
    intensity_max: float = Field(0.5, ge=0.0, le=1.0)
    #: ``false``: every island samples with ``fixed_intensity`` (ablation).
    use_adaptive_search: bool = True
    fixed_intensity: float = Field(0.4, ge=0.0, le=1.0)
    #: ``false``: round-robin islands (ablation).
    use_ucb_selection: bool = True
    ucb_exploration: float = Field(1.41, ge=0.0)
    #: Raw visits an island needs before UCB scores it (fewer: drawn uniformly among such).
    min_visits: int = Field(3, ge=0)
    use_migration: bool = True
    migration_interval: int = Field(15, ge=1)
    use_dynamic_islands: bool = True
    max_islands: int = Field(5, ge=1, le=64)
    #: Spawn when global improvements/evaluations falls below this.
    spawn_productivity_threshold: float = Field(0.015, ge=0.0)
    spawn_cooldown_iterations: int = Field(30, ge=0)
    #: Share of the context drawn from the island (most distant from the parent).
    local_context_program_ratio: float = Field(0.6, ge=0.0, le=1.0)
    #: Context programs per prompt (local + global top).
    num_inspirations: int = Field(4, ge=1, le=50)

    @model_validator(mode="after")
    def _bounds(self) -> AdaEvolvePolicyConfig:
        if self.intensity_min > self.intensity_max:
            raise ValueError(
                f"intensity_min ({self.intensity_min}) is above intensity_max "
                f"({self.intensity_max}): swap them"
            )
        return self


@block(
    "adaevolve_adaptive",
    "G-signal intensity splits explore/exploit/balanced parents on the UCB-chosen island; ring "
    "migration and island spawning on low global productivity.",
)
class AdaEvolvePolicy(BaseSelectionPolicy):
    parallel_ok = False

    def __init__(
        self,
        rng: random.Random,
        config: AdaEvolvePolicyConfig,
        population: AdaEvolveArchipelago,
        memory: ParadigmMemory | None,
    ) -> None:
        super().__init__(rng)
        self.config = config
        self.population = population
        self.memory = memory
        self.bandit = IslandBandit(
            decay=config.decay, exploration=config.ucb_exploration, min_visits=config.min_visits
        )
        for _ in population.islands:
            self.bandit.add_island(config.intensity_min, config.intensity_max)
        self.current_island = 0
        self.last_spawn = -config.spawn_cooldown_iterations
        self.last_ucb: list[float] = []

    # -- selection --------------------------------------------------------------------------
    def intensity(self, island: int) -> float:
        if self.config.use_adaptive_search:
            return self.bandit.states[island].intensity()
        return self.config.fixed_intensity

    async def select(self, population: PopulationView, step: Step) -> Selection:
        pop = self.population
        self._match_islands()
        island = self.current_island
        archive = pop.islands[island]
        if len(archive) == 0:
            if len(pop) == 0:
                return Selection(parent=None, info={"island": island}, tags={"island": island})
            raise RuntimeError(f"island {island} is empty while the population is not")
        intensity = self.intensity(island)
        r = self.rng.random()
        if r < intensity:
            mode = "exploration"
        elif r < intensity + (1 - intensity) * 0.7:
            mode = "exploitation"
        else:
            mode = "balanced"
        if mode == "exploitation":
            ranked = archive.ranked_by_proxy()  # sorted by proxy fitness, best first (stable)
            parent = self.rng.choice(ranked[: max(1, len(ranked) // 4)])
        else:
            parent = archive.sample_parent(mode, self.rng)
        sampled = parent.id
        paradigm = self.memory.current() if self.memory is not None else None
        if paradigm is not None and pop.best_program is not None:
            parent = pop.best_program
        k = self.config.num_inspirations
        local = max(1, int(k * self.config.local_context_program_ratio))
        context = archive.most_distant(parent, local) + self._global_top(parent, k - local)
        label = {"exploration": EXPLORE_LABEL, "exploitation": EXPLOIT_LABEL}.get(mode, "")
        state = self.bandit.states[island]
        info: dict[str, Any] = {
            "island": island,
            "mode": mode,
            "intensity": intensity,
            "G": state.signal,
            "ucb": [s if s != float("inf") else None for s in self.last_ucb],
            "islands": len(pop.islands),
        }
        if paradigm is not None:
            info["paradigm"] = str(paradigm.get("idea", ""))[:200]
            info["sampled_parent"] = sampled
        return Selection(
            parent=parent,
            inspirations=tuple(context),
            parent_label=label,
            info=info,
            tags={"island": island, "mode": mode},
        )

    def _match_islands(self) -> None:
        """Keep the bandit and the current island consistent with the population's islands.

        Only a checkpoint restored into one block but not the other can make them disagree
        (the conformance suite does that on purpose); a run never does.
        """
        while len(self.bandit.states) < len(self.population.islands):
            self.bandit.add_island(self.config.intensity_min, self.config.intensity_max)
        if self.current_island >= len(self.population.islands):
            self.current_island = 0

    def _global_top(self, parent: Program, n: int) -> list[Program]:
        # Not population.top_by_proxy: the reference (SkyDiscover 0.1.0's _sample_global_top)
        # returns a pool of at most n candidates as found, in island order, unsorted.
        pool = [p for isl in self.population.islands for p in isl.members() if p.id != parent.id]
        if len(pool) <= n:
            return pool
        return sorted(pool, key=proxy_fitness, reverse=True)[: max(0, n)]

    # -- bookkeeping ------------------------------------------------------------------------
    def observe(self, outcome: IterationOutcome) -> None:
        child = outcome.child
        if child is None or not outcome.admitted:
            return
        self._match_islands()
        island = self.population.island_of(child.id)
        if island is not None:
            self.bandit.record(island, proxy_fitness(child))

    async def start_iteration(self, step: Step) -> None:
        self._match_islands()
        if step.iteration > 0:
            self._seed_empty_islands(step)

    async def end_iteration(self, step: Step, outcome: IterationOutcome) -> None:
        iteration = step.iteration
        self._match_islands()
        if iteration == 0:
            self._seed_empty_islands(step)
            return
        if self._should_spawn(iteration):
            self._spawn(step, iteration)
        if self.config.use_ucb_selection:
            self.last_ucb = self.bandit.scores(iteration)
            self.current_island, why = self.bandit.pick(iteration, self.rng)
        else:
            self.last_ucb = []
            self.current_island, why = (iteration + 1) % len(self.population.islands), "round_robin"
        step.event(
            "island_chosen",
            island=self.current_island,
            reason=why,
            ucb=[s if s != float("inf") else None for s in self.last_ucb],
            visits=list(self.bandit.visits),
        )
        if self.config.use_migration and iteration % self.config.migration_interval == 0:
            self._migrate(step)

    def _seed_empty_islands(self, step: Step) -> None:
        """Copies of the first program found go to every empty island (external updates)."""
        pop = self.population
        source = next((isl.members()[0] for isl in pop.islands if len(isl)), None)
        if source is None:
            return
        for i, island in enumerate(pop.islands):
            if len(island):
                continue
            copy = step.new_program(
                source, parent_id=None, generation=0, metadata={"island": i, "seeded_to_island": i}
            )
            if pop.add_to_island(i, copy):
                self._credit(i, copy)
            step.event("island_seeded", island=i, program=copy.id, source=source.id)

    def _credit(self, island: int, program: Program) -> None:
        """A program a hook added: the island's own evaluation when it is the current island
        (with a paradigm tick), else an external improvement."""
        fitness = proxy_fitness(program)
        if island == self.current_island:
            self.bandit.record(island, fitness)
            if self.memory is not None:
                self.memory.tick(self.population.last_improved, self.population.best_score)
        else:
            self.bandit.receive(island, fitness)

    def _should_spawn(self, iteration: int) -> bool:
        cfg = self.config
        return (
            cfg.use_dynamic_islands
            and len(self.population) > 0
            and len(self.population.islands) < cfg.max_islands
            and iteration - self.last_spawn >= cfg.spawn_cooldown_iterations
            and self.bandit.productivity() < cfg.spawn_productivity_threshold
        )

    def _spawn(self, step: Step, iteration: int) -> None:
        pop = self.population
        usage = {name: pop.presets.count(name) for name in PRESETS}
        least = min(usage.values())
        preset = self.rng.choice([name for name in PRESETS if usage[name] == least])
        productivity = self.bandit.productivity()
        seeds = pop.top_by_proxy(SPAWN_SEEDS)
        island = pop.spawn(preset)
        self.bandit.add_island(self.config.intensity_min, self.config.intensity_max)
        copies = []
        for source in seeds:
            copy = step.new_program(
                source, metadata={"island": island, "seeded_to_spawned_island": island}
            )
            pop.place(island, copy)
            copies.append(copy.id)
        self.last_spawn = iteration
        step.event(
            "island_spawned",
            island=island,
            preset=preset,
            productivity=productivity,
            seeds=copies,
        )

    def _migrate(self, step: Step) -> None:
        pop = self.population
        moved: list[dict[str, Any]] = []
        count = len(pop.islands)
        for src in range(count):
            dest = (src + 1) % count
            for source in pop.islands[src].top(pop.config.migration_count):
                if any(p.code == source.code for p in pop.islands[dest].members()):
                    continue
                copy = step.new_program(
                    source, metadata={"island": dest, "migrated_from": src, "migrated_to": dest}
                )
                admitted = pop.add_to_island(dest, copy)
                if admitted:
                    self._credit(dest, copy)
                moved.append({"program": copy.id, "from": src, "to": dest, "admitted": admitted})
        step.event("migration", current_island=self.current_island, migrants=moved)

    # -- checkpoint -------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {
            "rng": rng_state(self.rng),
            "bandit": self.bandit.state_dict(),
            "current_island": self.current_island,
            "last_spawn": self.last_spawn,
            "last_ucb": list(self.last_ucb),
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        rng_from_state(self.rng, state["rng"])
        self.bandit = IslandBandit.from_state(state["bandit"])
        self.current_island = int(state["current_island"])
        self.last_spawn = int(state["last_spawn"])
        self.last_ucb = [float(s) for s in state["last_ucb"]]
