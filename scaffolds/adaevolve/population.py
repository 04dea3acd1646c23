"""``AdaEvolveArchipelago``: the islands' quality-diversity archives and the global best.

The controller's ``add`` routes a child to the island in its ``metadata["island"]`` (the
selection's tag; the seed, untagged, goes to island 0).  Migration, seeding and spawning are the
selection policy's decisions (it owns the bandit and the RNG); they reach the islands through
:meth:`add_to_island` (admission plus the global-best update, as the reference's ``add``) and
:meth:`place` (straight into an archive: a spawned island's seed copies).

The global best is tracked as the reference does: strict ``>`` on the proxy fitness over every
admitted program; :attr:`last_improved` says whether the latest admission raised it (the
paradigm memory's tick).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import Field

from harness.core.blocks import block
from harness.core.population import BasePopulation
from harness.core.records import Program
from harness.core.validation import StrictModel
from scaffolds.adaevolve.archive import ArchiveWeights, IslandArchive, proxy_fitness

__all__ = ["PRESETS", "AdaEvolveArchipelago", "ArchipelagoConfig"]

#: Spawn presets (name → weights); the initial islands count as ``balanced`` for the choice but
#: use the configured weights.
PRESETS: dict[str, ArchiveWeights] = {
    "balanced": ArchiveWeights(fitness_weight=0.3, novelty_weight=0.3, pareto_weight=0.4),
    "quality": ArchiveWeights(
        fitness_weight=0.6, novelty_weight=0.2, pareto_weight=0.2, elite_ratio=0.3
    ),
    "diversity": ArchiveWeights(
        fitness_weight=0.2, novelty_weight=0.5, pareto_weight=0.3, elite_ratio=0.1
    ),
    "pareto": ArchiveWeights(fitness_weight=0.2, novelty_weight=0.2, pareto_weight=0.6),
    "exploration": ArchiveWeights(
        fitness_weight=0.3, novelty_weight=0.5, pareto_weight=0.2, elite_ratio=0.05
    ),
}


class ArchipelagoConfig(StrictModel):
    #: Initial island count.
    num_islands: int = Field(2, ge=1, le=64)
    #: Capacity of each island's archive.
    population_size: int = Field(20, ge=1)
    #: k of the k-NN code-distance novelty.
    k_neighbors: int = Field(5, ge=1)
    #: Share of each archive protected from eviction (by elite score).
    archive_elite_ratio: float = Field(0.2, ge=0.0, le=1.0)
    fitness_weight: float = Field(1.0, ge=0.0)
    novelty_weight: float = Field(0.0, ge=0.0)
    #: Added to the fitness weight (scalar mode has no Pareto objectives).
    pareto_weight: float = Field(0.4, ge=0.0)
    #: Programs each island sends to the next one per migration (top by fitness).
    migration_count: int = Field(5, ge=0)


@block(
    "adaevolve_archipelago",
    "Islands of quality-diversity archives: k-NN code-distance novelty, protected elites, "
    "crowding admission against the most similar member; genealogy for siblings.",
)
class AdaEvolveArchipelago(BasePopulation):
    parallel_ok = False

    def __init__(self, config: ArchipelagoConfig) -> None:
        self.config = config
        self.islands: list[IslandArchive] = []
        self.presets: list[str] = []
        self.best_program: Program | None = None
        self.best_score = float("-inf")
        self.last_improved = False
        #: id -> (island, program), in admission order.
        self._members: dict[str, tuple[int, Program]] = {}
        self.weights = ArchiveWeights(
            fitness_weight=config.fitness_weight,
            novelty_weight=config.novelty_weight,
            pareto_weight=config.pareto_weight,
            elite_ratio=config.archive_elite_ratio,
        )
        for _ in range(config.num_islands):
            self._new_island("balanced", self.weights)

    # -- islands ----------------------------------------------------------------------------
    def _new_island(self, preset: str, weights: ArchiveWeights) -> int:
        self.islands.append(
            IslandArchive(self.config.population_size, self.config.k_neighbors, weights)
        )
        self.presets.append(preset)
        return len(self.islands) - 1

    def spawn(self, preset: str) -> int:
        """A new, empty island with ``preset``'s weights; returns its index."""
        return self._new_island(preset, PRESETS[preset])

    def add_to_island(self, island: int, program: Program) -> bool:
        """Admit ``program`` to ``island`` and update the global best (the reference's add)."""
        admission = self.islands[island].add(program)
        self.last_improved = False
        if admission.admitted:
            self._admitted(island, program, admission.evicted)
            fitness = proxy_fitness(program)
            if fitness > self.best_score:
                self.best_score, self.best_program = fitness, program
                self.last_improved = True
        return admission.admitted

    def place(self, island: int, program: Program) -> bool:
        """Straight into ``island``'s archive: no global-best update (spawned-island seeds)."""
        admission = self.islands[island].add(program)
        if admission.admitted:
            self._admitted(island, program, admission.evicted)
        return admission.admitted

    def _admitted(self, island: int, program: Program, evicted: str | None) -> None:
        self._members[program.id] = (island, program)
        if evicted is not None:  # displaced from its archive, it leaves the population
            del self._members[evicted]

    def island_of(self, program_id: str) -> int | None:
        member = self._members.get(program_id)
        return member[0] if member else None

    # -- the population contract ------------------------------------------------------------
    def add(self, program: Program) -> bool:
        island = program.metadata.get("island", 0)
        if not isinstance(island, int) or not 0 <= island < len(self.islands):
            island = 0
        return self.add_to_island(island, program)

    def programs(self) -> Sequence[Program]:
        return [p for _, p in self._members.values()]

    def get(self, program_id: str) -> Program | None:
        member = self._members.get(program_id)
        return member[1] if member else None

    def __len__(self) -> int:
        return len(self._members)

    def __contains__(self, program_id: object) -> bool:
        return program_id in self._members

    def best(self) -> Program | None:
        return self.best_program

    def top_by_proxy(self, n: int, exclude: str | None = None) -> list[Program]:
        """Members of every island (island order), best proxy fitness first (stable)."""
        pool = [p for isl in self.islands for p in isl.members() if p.id != exclude]
        return sorted(pool, key=proxy_fitness, reverse=True)[: max(0, n)]

    # -- checkpoint -------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {
            "members": list(self._members),
            "islands": [isl.state_dict() for isl in self.islands],
            "presets": list(self.presets),
            "best": self.best_program.id if self.best_program else None,
            "best_score": self.best_score,
            "last_improved": self.last_improved,
        }

    def load_state_dict(self, state: Mapping[str, Any], programs: Mapping[str, Program]) -> None:
        self.islands, self.presets = [], []
        for preset in state["presets"]:
            weights = self.weights if len(self.islands) < self.config.num_islands else None
            self._new_island(preset, weights or PRESETS[preset])
        for island, island_state in zip(self.islands, state["islands"], strict=True):
            island.load_state_dict(island_state, programs)
        where = {p.id: i for i, isl in enumerate(self.islands) for p in isl.members()}
        self._members = {pid: (where[pid], programs[pid]) for pid in state["members"]}
        self.best_program = programs[state["best"]] if state["best"] else None
        self.best_score = float(state["best_score"])
        self.last_improved = bool(state["last_improved"])
