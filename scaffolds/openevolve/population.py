"""``map_elites_islands``: OpenEvolve 0.4.0's ``ProgramDatabase`` as a population block.

Per-island MAP-Elites grids over ``feature_dimensions`` (one elite per cell), a global elite
archive, the population cap and lazy ring migration on per-island generation counters.  What
the reference does, step by step (``ProgramDatabase._add`` and the parallel controller):

- A program lands on the island its metadata names (the selection's ``island`` tag: the island
  it was sampled from, openevolve#391), else its parent's island, else island 0 (the seed).
- It joins the island whatever its fitness; it takes its cell when the cell is empty, its owner
  is gone, or it is strictly fitter.  The displaced owner leaves the island, hands over its
  archive slot, and is deleted when it owns no other cell, is on no island and is not the best.
- Archive: join while under ``archive_size``, else replace the worst member if strictly fitter.
- Cap: past ``population_size``, programs owning no cell go first (worst fitness first), then
  cell owners; the best and the newcomer are never evicted.
- After each admitted LLM child (``end_iteration``) its island's generation grows by one; when
  ``max(generations) - last_migration >= migration_interval`` the top
  ``max(1, int(n * migration_rate))`` of every island (by fitness) are copied to islands
  ``i+1`` then ``i-1`` (mod N), skipping migrants and code the target island already holds.

Islands and the archive are insertion-ordered here; the reference keeps them in Python sets of
uuids, whose order is arbitrary (see the scaffold README).  Feature coordinates follow
:mod:`scaffolds.openevolve.features`; every coordinate computation, the selection's included,
widens the running min/max as in the reference.

What the reference recomputes per selection is kept here as programs come and go (same results,
step for step): each island's ranking by a key (``island_ranked``: top programs and prompt
context) and, once a program's coordinates depend on the program alone, each island's cell
owners (``nearby_cells``, rebuilt when the scaling widens).  From then on no coordinate
computation refills the diversity cache, whose contents by then decide no value (nor does it
change in the checkpoint any more).
"""

from __future__ import annotations

import bisect
import hashlib
import random
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from pydantic import Field, field_validator

from harness.core.block import Step
from harness.core.blocks import block
from harness.core.errors import HarnessError
from harness.core.population import BasePopulation
from harness.core.records import IterationOutcome, Program
from harness.core.rng import rng_from_state, rng_state
from harness.core.validation import StrictModel
from scaffolds.openevolve.features import FeatureScaler, fast_diversity, fitness
from scaffolds.openevolve.roster import Roster

__all__ = ["MapElitesIslandsConfig", "MapElitesIslandsPopulation"]

#: Diversity values kept (the reference's LRU of 1,000 entries, evicted oldest first).
DIVERSITY_CACHE_SIZE = 1000
BUILTIN_FEATURES = ("complexity", "diversity", "score")


class MapElitesIslandsConfig(StrictModel):
    #: Islands, each with its own grid; a child joins the island it was sampled from.
    num_islands: int = Field(5, ge=1, le=1000)
    #: Global elite archive capacity; also floors ``feature_bins`` (bins^dims >= archive).
    archive_size: int = Field(100, ge=1)
    #: Programs kept before eviction (cell owners last).
    population_size: int = Field(1000, ge=1)
    #: Behaviour axes: ``complexity``, ``diversity``, ``score`` or any numeric metric name.
    feature_dimensions: list[str] = Field(default_factory=lambda: ["complexity", "diversity"])
    #: Bins per axis: one number for all, or a number per dimension.
    feature_bins: int | dict[str, int] = 10
    #: Migrate when the leading island is this many generations past the last migration.
    migration_interval: int = Field(50, ge=1)
    #: Share of each island copied to each ring neighbour.
    migration_rate: float = Field(0.1, ge=0.0, le=1.0)
    #: Programs in the reference sample the diversity descriptor compares against.
    diversity_reference_size: int = Field(20, ge=1)

    @field_validator("feature_dimensions")
    @classmethod
    def _dimensions(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("feature_dimensions needs at least one dimension")
        if len(set(value)) != len(value):
            raise ValueError(f"feature_dimensions has a duplicate: {value}")
        return value

    @field_validator("feature_bins")
    @classmethod
    def _bins(cls, value: int | dict[str, int]) -> int | dict[str, int]:
        counts = value.values() if isinstance(value, dict) else [value]
        if any(n < 1 for n in counts):
            raise ValueError(f"feature_bins must be at least 1, got {value}")
        return value


def _digest(code: str) -> str:
    return hashlib.blake2b(code.encode(), digest_size=8).hexdigest()


def _weight(fitness: float) -> float:
    """A program's weight in the weighted tier: ``max(fitness, 0.001)`` (a NaN stays NaN, as
    ``max`` keeps its first argument)."""
    return 0.001 if fitness < 0.001 else fitness


@block(
    "map_elites_islands",
    "Per-island MAP-Elites grids (one elite per cell), a global elite archive, a population cap "
    "and lazy ring migration (OpenEvolve's ProgramDatabase).",
)
class MapElitesIslandsPopulation(BasePopulation):
    """See the module docstring.  ``rng`` drives the one random step the reference takes here
    (the first pick of the diversity reference set once more programs exist than it holds)."""

    def __init__(self, config: MapElitesIslandsConfig, rng: random.Random) -> None:
        self.config = config
        self.rng = rng
        dims = config.feature_dimensions
        if isinstance(config.feature_bins, int):
            floor = int(pow(config.archive_size, 1 / len(dims)) + 0.99)
            self.feature_bins = max(config.feature_bins, floor)
            self.bins = {d: self.feature_bins for d in dims}
        else:  # the reference's fallback of 10 for a dimension the dict does not name
            self.feature_bins = 10
            self.bins = {d: config.feature_bins.get(d, 10) for d in dims}
        n = config.num_islands
        self._programs: dict[str, Program] = {}
        #: The members in ``_programs``' order, each with its island (the checkpoint's lists).
        self._members = Roster()
        self._island_of: dict[str, int] = {}
        #: Each island's ids in the order they joined, each with its weight in the weighted tier
        #: (``_weight``: its fitness, at least 0.001).
        self.islands: list[Roster] = [Roster() for _ in range(n)]
        #: Per island, its members' code → how many of them have it (migration's duplicate
        #: check).
        self._codes: list[dict[str, int]] = [{} for _ in range(n)]
        self.cells: list[dict[str, str]] = [{} for _ in range(n)]
        #: Per island, its grid as the last checkpoint got it (``None``: changed since).
        self._cells_state: list[dict[str, str] | None] = [None] * n
        #: Archived ids in the order they joined, each with its fitness.
        self.archive: dict[str, float] = {}
        self.best_id: str | None = None
        self.island_best: list[str | None] = [None] * n
        self.generations = [0] * n
        self.last_migration = 0
        self.scaler = FeatureScaler()
        self._reference: list[str] = []  # ids of the programs whose code is the reference set
        self._reference_code: list[str] = []
        #: ``_reference_code`` as ``_against_reference`` reads it: (code, length, lines, chars).
        self._profiles: list[tuple[str, int, int, int]] = []
        self._profiled: list[str] | None = None
        #: A bit per character seen (``_char_mask``).
        self._bits: dict[str, int] = {}
        self._diversity: dict[str, tuple[float, str]] = {}  # code digest -> (value, program id)
        self._frozen: dict[str, float] = {}  # code digest -> value against the full reference
        self._events: list[tuple[str, dict[str, Any]]] = []
        #: Every program ever added or restored, members or not (for selections made earlier).
        self._known: dict[str, Program] = {}
        #: Digests in ``_diversity`` whose value was computed before the reference set was full
        #: (while any is cached, a program's diversity depends on the cache's contents).
        self._stale: set[str] = set()
        #: Per island, each member's cell while nothing a cell depends on changes
        #: (:meth:`nearby_cells`); memos of values that depend on the program alone.
        self._cell_index: dict[int, _CellIndex] = {}
        #: Per (island, key function): its members ranked (:meth:`island_ranked`).
        self._rankings: dict[tuple[int, Callable[[Program], float]], _Ranking] = {}
        #: Every member by fitness ascending (the cap's eviction order; built on first need).
        self._global: _Ranking | None = None
        self._fitness: dict[str, float] = {}
        self._settled: dict[str, float] = {}
        #: Per member, ``_raw_values`` once settled.
        self._raws: dict[str, tuple[float | None, ...]] = {}
        self._cache_state: dict[str, Any] | None = None
        #: ``_diversity``'s entries as the checkpoint lists them, kept in step with it.
        self._cache_pairs: list[list[Any]] = []
        #: Per program, its coordinates and the scaling's version they were computed under, once
        #: values are settled (observing them again under that version changes nothing).
        self._coords: dict[str, tuple[int, list[int]]] = {}
        #: ``archive_ids``' lists and the archive's worst member, while the archive and the
        #: islands of its members stay as they are (``_archive_changed`` drops them).
        self._archived: list[str] | None = None
        self._archived_here: dict[int, list[str]] = {}
        self._worst_archived: str | None = None
        self._uses_diversity = "diversity" in dims
        #: The reference set is full and no value computed before it was is cached.
        self._reference_settled = False

    # -- the population contract -------------------------------------------------------------
    def programs(self) -> Sequence[Program]:
        return list(self._programs.values())

    def member_ids(self) -> Roster:
        """The members' ids in ``programs()`` order (a live view: read it before a change)."""
        return self._members

    def get(self, program_id: str) -> Program | None:
        return self._programs.get(program_id)

    def __len__(self) -> int:
        return len(self._programs)

    def __contains__(self, program_id: object) -> bool:
        return program_id in self._programs

    def best(self) -> Program | None:
        return self._programs.get(self.best_id) if self.best_id else None

    def lookup(self, program_id: str) -> Program:
        """A program this population has held, member or not (a selection made earlier may
        name one that has since left)."""
        program = self._programs.get(program_id) or self._known.get(program_id)
        if program is None:
            raise HarnessError(f"program {program_id} was never in this population")
        return program

    def add(self, program: Program) -> bool:
        if program.id in self._programs:
            return False
        self._known[program.id] = program
        island = program.metadata.get("island")
        if not isinstance(island, int) or isinstance(island, bool):
            parent = self._programs.get(program.parent_id or "")
            island = self._island_of.get(parent.id, 0) if parent else 0
        self._place(program, island % len(self.islands))
        return True

    # -- what the selection policy and prompt builder read ------------------------------------
    def fitness(self, program: Program) -> float:
        value = self._fitness.get(program.id)
        if value is None or self._known.get(program.id) is not program:
            value = fitness(program.metrics, self.config.feature_dimensions)
            if self._known.get(program.id) is program:
                self._fitness[program.id] = value
        return value

    def island_of(self, program_id: str) -> int | None:
        return self._island_of.get(program_id)

    def island_size(self, island: int) -> int:
        """``len(self.island_members(island))``: every id on an island is a member (``_place``
        adds both, ``_enforce_cap`` removes both, ``_remove_if_orphaned`` only removes programs
        on no island)."""
        return len(self.islands[island])

    def island_members(self, island: int) -> list[Program]:
        return [self._programs[pid] for pid in self.islands[island] if pid in self._programs]

    def island_top(self, island: int, n: int) -> list[Program]:
        return self.island_ranked(island, n, self.fitness)

    def island_ranked(self, island: int, n: int, key: Callable[[Program], float]) -> list[Program]:
        """``sorted(self.island_members(island), key=key, reverse=True)[:n]`` (ties keep island
        order), from a ranking kept as members come and go; ``key`` must depend on the program
        alone."""
        ranking = self._rankings.get((island, key))
        if ranking is None:
            ranking = _Ranking(key, self.island_members(island), True)
            self._rankings[(island, key)] = ranking
        if ranking.unordered:  # a NaN key: no order to keep; sort as the reference does
            ranked = sorted(self.island_members(island), key=key, reverse=True)
            return ranked[: max(0, n)]
        return [self._programs[pid] for pid in ranking.top(n)]

    def archive_ids(self, island: int) -> tuple[list[str], list[str]]:
        """The ids of ``archive_members()``, and of those on ``island`` (kept until the archive
        or one of its members changes: never change the lists)."""
        ids = self._archived
        if ids is None:
            members = self._programs
            ids = self._archived = [pid for pid in self.archive if pid in members]
        here = self._archived_here.get(island)
        if here is None:
            where = self._island_of
            here = self._archived_here[island] = [pid for pid in ids if where[pid] == island]
        return ids, here

    def _archive_changed(self) -> None:
        """The archive, or the membership or island of an id in it, changed."""
        self._archived = None
        self._archived_here.clear()
        self._worst_archived = None

    def archive_members(self) -> list[Program]:
        return [self._programs[pid] for pid in self.archive if pid in self._programs]

    def valid_island_best(self, island: int) -> str | None:
        """The island's best if it still lives there; a stale reference is cleared, as the
        reference's inspiration sampling does."""
        best = self.island_best[island]
        if best is not None and (best not in self._programs or best not in self.islands[island]):
            self.island_best[island] = None
            return None
        return best

    def coordinates(
        self, program: Program, diversity: Callable[[Program], float] | None = None
    ) -> list[int]:
        """The program's grid coordinates under the current scaling (observing its values);
        ``diversity`` measures the diversity dimension instead of the cached reference one.

        Once values are settled, a program's coordinates under a scaling whose version has not
        moved since they were computed are those again (its values were observed then, so
        observing them again changes nothing): they are kept per program."""
        settled = diversity is None and self._settled_values()
        if settled:
            kept = self._coords.get(program.id)
            if (
                kept is not None
                and kept[0] == self.scaler.version
                and self._known.get(program.id) is program
            ):
                return list(kept[1])
        version = self.scaler.version
        measure = diversity or self._diversity_of
        coords = []
        for dim in self.config.feature_dimensions:
            bins = self.bins[dim]
            if dim in program.metrics:
                coords.append(self.scaler.bin(dim, self._metric(program, dim), bins))
            elif dim == "complexity":
                coords.append(self.scaler.bin(dim, float(len(program.code)), bins))
            elif dim == "diversity":
                if len(self._programs) < 2:
                    coords.append(0)
                else:
                    coords.append(self.scaler.bin(dim, measure(program), bins))
            elif dim == "score":
                if not program.metrics:
                    coords.append(0)
                else:
                    coords.append(self.scaler.bin(dim, self.fitness(program), bins))
            else:
                self._no_such_metric(program, dim)
                coords.append(0)
        if settled and version == self.scaler.version and self._known.get(program.id) is program:
            self._coords[program.id] = (version, list(coords))  # (none widened the scaling)
        return coords

    @staticmethod
    def _no_such_metric(program: Program, dim: str) -> None:
        """A dimension that is neither a metric of ``program`` nor built in: bin 0 for a failed
        evaluation (it reports no metric of the evaluator's own; OpenEvolve drops such a child
        with an error: here it is still recorded as failed), else an error."""
        if program.metrics.get("validity") != 0:
            raise HarnessError(
                f"feature dimension {dim!r} is not a metric of program {program.id} "
                f"(metrics: {', '.join(sorted(program.metrics)) or 'none'}); built-in "
                f"dimensions are {', '.join(BUILTIN_FEATURES)}: fix "
                "population.feature_dimensions or make the evaluator report it"
            )

    @staticmethod
    def cell_key(coords: Sequence[int]) -> str:
        return "-".join(map(str, coords))

    def nearby_cells(self, island: int, ids: Sequence[str]) -> Mapping[str, str]:
        """Cell → owner over the members ``ids`` of ``island`` (in island order, the last of a
        cell owns it) under the current scaling: what the reference's nearby-inspiration step
        builds, computing every member's coordinates (and observing their values) each time.

        Once a member's coordinates depend on the program alone (its metrics and code; for
        ``diversity``, once the reference set is full and no value computed before that is
        cached), they change only when the scaling does: the map is then kept per island,
        updated as members come and go, and built again when the scaling widens."""
        index = self._cell_index.get(island)
        settled = self._settled_values()
        if index is not None and settled and index.version == self.scaler.version:
            return index
        self._cell_index.pop(island, None)
        version = self.scaler.version
        if settled and (at_rest := self._cells_at_rest(ids)) is not None:
            self._cell_index[island] = at_rest
            return at_rest
        measure = self._settled_diversity if settled else None
        cells: dict[str, str] = {}
        built = _CellIndex(version)
        for pid in ids:
            program = self._programs.get(pid)
            if program is not None:
                key = self.cell_key(self.coordinates(program, measure))
                cells[key] = pid
                built.add(pid, key)
        if settled and self.scaler.version == version:  # else computed under moving scales
            self._cell_index[island] = built
        return cells

    def _cells_at_rest(self, ids: Sequence[str]) -> _CellIndex | None:
        """``nearby_cells``' map built from each member's values (kept: they depend on the
        program alone) when every one lies within the scaling as it stands, so that observing
        them, as the reference does, would change nothing; ``None``: some would widen it."""
        pids, rows = [], []
        raws, programs = self._raws, self._programs
        for pid in ids:
            if pid in programs:
                values = raws.get(pid)
                if values is None:
                    values = raws[pid] = self._raw_values(programs[pid])
                pids.append(pid)
                rows.append(values)
        columns = []
        for at, dim in enumerate(self.config.feature_dimensions):
            column = self.scaler.bins_within(dim, [v[at] for v in rows], self.bins[dim])
            if column is None:
                return None
            columns.append(column)
        keys = ["-".join(map(str, coords)) for coords in zip(*columns, strict=True)]
        return _CellIndex.of(self.scaler.version, pids, keys)

    def _raw_values(self, program: Program) -> tuple[float | None, ...]:
        """What ``coordinates`` bins per dimension once values are settled (``None``: bin 0
        whatever the scaling)."""
        out: list[float | None] = []
        for dim in self.config.feature_dimensions:
            if dim in program.metrics:
                out.append(self._metric(program, dim))
            elif dim == "complexity":
                out.append(float(len(program.code)))
            elif dim == "diversity":
                out.append(self._settled_diversity(program))
            elif dim == "score":
                out.append(self.fitness(program) if program.metrics else None)
            else:
                self._no_such_metric(program, dim)
                out.append(None)
        return tuple(out)

    def _settled_values(self) -> bool:
        """Whether every coordinate is a function of the program alone (see ``nearby_cells``).
        The reference set full and no stale value cached stays so (neither changes once it
        is: ``_diversity_of``), so that part is remembered until a checkpoint is loaded."""
        if not self._uses_diversity:
            return True
        if not self._reference_settled:
            full = len(self._reference) >= self.config.diversity_reference_size
            self._reference_settled = full and not self._stale
        return self._reference_settled and len(self._programs) >= 2

    def _settled_diversity(self, program: Program) -> float:
        """``_diversity_of`` once values are settled: what it returns, without touching its
        cache (whose contents no longer decide any value)."""
        value = self._settled.get(program.id)
        if value is None:
            digest = _digest(program.code)
            cached = self._diversity.get(digest)
            value = cached[0] if cached is not None else self._frozen.get(digest)
            if value is None:
                value = self._against_reference(program.code)
                self._frozen[digest] = value
            self._settled[program.id] = value
        return value

    def _index_add(self, island: int, program: Program, key: str) -> None:
        """``program`` joined ``island`` (last) in cell ``key``: the kept indexes follow."""
        if not self._settled_values():
            self._cell_index.clear()
        elif (index := self._cell_index.get(island)) is not None:
            index.add(program.id, key)
        for (at, _), ranking in self._rankings.items():
            if at == island:
                ranking.add(program)

    def _index_remove(self, pid: str) -> None:
        """``pid`` left whichever island held it."""
        for index in self._cell_index.values():
            index.remove(pid)
        for ranking in self._rankings.values():
            ranking.remove(pid)

    # -- admission ------------------------------------------------------------------------------
    def _place(self, program: Program, island: int) -> None:
        pid = program.id
        self._programs[pid] = program
        if pid in self.archive:  # an id of no member before (a restored checkpoint's)
            self._archive_changed()
        self._members.add(pid, island)
        if self._global is not None:
            self._global.add(program)
        coords = self.coordinates(program)
        key = self.cell_key(coords)
        grid = self.cells[island]
        incumbent = grid.get(key)
        if incumbent is None or incumbent not in self._programs:
            take = True
        else:
            take = self._better(program, self._programs[incumbent])
        displaced = None
        if take:
            if incumbent is not None:
                if incumbent in self._programs and incumbent in self.archive:
                    del self.archive[incumbent]
                    self.archive[pid] = self.fitness(program)
                    self._archive_changed()
                self._leave(island, incumbent)
                self._index_remove(incumbent)
                displaced = incumbent
            grid[key] = pid
            self._cells_state[island] = None
        self._join(island, program)
        self._index_add(island, program, key)
        self._island_of[pid] = island
        self._update_archive(program)
        self._update_best(program)
        self._update_island_best(program, island)
        removed = None
        if displaced is not None and displaced != pid and self._remove_if_orphaned(displaced):
            removed = displaced
        evicted = self._enforce_cap(exclude=pid)
        self._events.append(
            (
                "placement",
                {
                    "program": pid,
                    "island": island,
                    "cell": key,
                    "took_cell": take,
                    "displaced": displaced,
                    "removed": removed,
                    "archived": pid in self.archive,
                    "evicted": evicted,
                    "migrant": bool(program.metadata.get("migrant")),
                },
            )
        )

    def _better(self, a: Program, b: Program) -> bool:
        """``_is_better``: metrics beat none; two without metrics: the newer (``a``, always the
        newcomer here) wins, as the reference compares timestamps; else strictly fitter."""
        if not a.metrics or not b.metrics:
            return bool(a.metrics) or not b.metrics
        return self.fitness(a) > self.fitness(b)

    def _update_archive(self, program: Program) -> None:
        archive = self.archive
        if len(archive) < self.config.archive_size:
            archive[program.id] = self.fitness(program)
            self._archive_changed()
            return
        if self._archived is None or len(self._archived) != len(archive):
            if not archive.keys() <= self._programs.keys():
                for stale in [pid for pid in archive if pid not in self._programs]:
                    del archive[stale]
                self._archive_changed()
        if len(archive) < self.config.archive_size:
            archive[program.id] = self.fitness(program)
            self._archive_changed()
            return
        # ``min(self.archive_members(), key=self.fitness)``: every id left is a member's, in
        # archive order, with its fitness (kept until the archive changes).
        if self._worst_archived is None:
            self._worst_archived = min(archive, key=archive.__getitem__)
        worst = self._programs[self._worst_archived]
        if self._better(program, worst) and worst.id != program.id:
            del archive[worst.id]
            archive[program.id] = self.fitness(program)
            self._archive_changed()

    def _update_best(self, program: Program) -> None:
        if self.best_id is None or self.best_id not in self._programs:
            self.best_id = program.id
        elif self._better(program, self._programs[self.best_id]):
            self.best_id = program.id

    def _update_island_best(self, program: Program, island: int) -> None:
        current = self.island_best[island]
        if current is None:
            self.island_best[island] = program.id
        elif current not in self.islands[island] or current not in self._programs:
            self._cleanup_island_bests()
        elif self._better(program, self._programs[current]):
            self.island_best[island] = program.id

    def _cleanup_island_bests(self) -> None:
        cleared = False
        for i, best in enumerate(self.island_best):
            if best is not None and (best not in self._programs or best not in self.islands[i]):
                self.island_best[i] = None
                cleared = True
        if not cleared:
            return
        for i, best in enumerate(self.island_best):
            if best is None and self.islands[i]:
                members = self.island_members(i)
                if members:
                    self.island_best[i] = max(members, key=self.fitness).id

    def _remove_if_orphaned(self, pid: str) -> bool:
        if pid not in self._programs:
            return False
        if any(pid in island for island in self.islands):
            return False
        if any(pid in grid.values() for grid in self.cells):
            return False
        if pid == self.best_id:
            return False
        self._remove_member(pid)
        del self._island_of[pid]
        self.archive.pop(pid, None)
        self._cleanup_island_bests()
        return True

    def _enforce_cap(self, exclude: str) -> list[str]:
        best = self.best_id
        orphan_best = (
            best in self._programs
            and not any(best in island for island in self.islands)
            and not any(best in grid.values() for grid in self.cells)
        )
        excess = len(self._programs) - int(orphan_best) - self.config.population_size
        if excess <= 0:
            return []
        protected = {best, exclude}
        owners = {pid for grid in self.cells for pid in grid.values()}
        doomed = self._worst(excess, protected, owners)
        for pid in doomed:
            self._remove_member(pid)
            del self._island_of[pid]
            for at, grid in enumerate(self.cells):
                for key in [k for k, owner in grid.items() if owner == pid]:
                    del grid[key]
                    self._cells_state[at] = None
            for at in range(len(self.islands)):
                self._leave(at, pid)
            self._index_remove(pid)
            self.archive.pop(pid, None)
        self._cleanup_island_bests()
        return doomed

    def _worst(self, excess: int, protected: set[str | None], owners: set[str]) -> list[str]:
        """The ``excess`` programs the cap evicts: those owning no cell first, then owners, each
        by fitness ascending (ties in admission order), never one of ``protected``; read off a
        ranking of every member kept as they come and go (a NaN fitness: sorted anew)."""
        ranking = self._global
        if ranking is None:
            ranking = self._global = _Ranking(self.fitness, list(self._programs.values()), False)
        if ranking.unordered:
            candidates = [p for p in self._programs.values() if p.id not in protected]
            free = sorted((p for p in candidates if p.id not in owners), key=self.fitness)
            owning = sorted((p for p in candidates if p.id in owners), key=self.fitness)
            return [p.id for p in (free + owning)[:excess]]
        plain: list[str] = []
        for pid in ranking.ids():
            if pid not in protected and pid not in owners:
                plain.append(pid)
                if len(plain) == excess:
                    return plain
        elite = [pid for pid in ranking.ids() if pid not in protected and pid in owners]
        return plain + elite[: excess - len(plain)]

    def _join(self, island: int, program: Program) -> None:
        roster = self.islands[island]
        if program.id not in roster:
            roster.add(program.id, _weight(self.fitness(program)))
            codes = self._codes[island]
            codes[program.code] = codes.get(program.code, 0) + 1

    def _leave(self, island: int, pid: str) -> None:
        if self.islands[island].discard(pid):
            codes = self._codes[island]
            code = self._known[pid].code
            if codes[code] == 1:
                del codes[code]
            else:
                codes[code] -= 1

    def _remove_member(self, pid: str) -> None:
        """``pid`` leaves the members (callers drop it from the archive as well)."""
        if pid in self.archive:
            self._archive_changed()
        del self._programs[pid]
        self._members.discard(pid)
        if self._global is not None:
            self._global.remove(pid)

    # -- diversity ------------------------------------------------------------------------------
    def _metric(self, program: Program, dim: str) -> float:
        value = program.metrics[dim]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise HarnessError(
                f"feature dimension {dim!r} of program {program.id} is {value!r}, not a number: "
                "a dimension must be a numeric metric (raw value, not a bin)"
            )
        return float(value)

    def _diversity_of(self, program: Program) -> float:
        if self._settled_values():  # the cache's contents decide no value any more
            return self._settled_diversity(program)
        digest = _digest(program.code)
        cached = self._diversity.get(digest)
        if cached is not None:
            return cached[0]
        full = len(self._reference) >= self.config.diversity_reference_size
        if not full:
            self._refresh_reference()
        # Once full, the reference set never changes again, so a value computed against it is
        # a function of the code alone: remembered beyond the 1,000-entry cache (whose contents
        # and order, which decide the values computed earlier, stay the reference's).
        value = self._frozen.get(digest) if full else None
        full = len(self._reference) >= self.config.diversity_reference_size
        if value is None:
            value = self._against_reference(program.code)
            if full:
                self._frozen[digest] = value
        if len(self._diversity) >= DIVERSITY_CACHE_SIZE:
            evicted = next(iter(self._diversity))
            del self._diversity[evicted]
            del self._cache_pairs[0]
            self._stale.discard(evicted)
        self._diversity[digest] = (value, program.id)
        self._cache_pairs.append([program.id, value])
        self._cache_state = None
        if not full:
            self._stale.add(digest)
        return value

    def _against_reference(self, code: str) -> float:
        """The mean ``fast_diversity`` of ``code`` against the reference set (codes equal to
        it left out), with each reference code's length, lines and characters counted once:
        the characters as a bit mask, so that the size of two codes' symmetric difference of
        characters is the popcount of their masks' xor."""
        if self._profiled is not self._reference_code:
            self._profiles = [
                (r, len(r), r.count("\n"), self._char_mask(r)) for r in self._reference_code
            ]
            self._profiled = self._reference_code
        size, lines, chars = len(code), code.count("\n"), self._char_mask(code)
        scores = [
            abs(size - n) * 0.1 + abs(lines - k) * 10 + (chars ^ c).bit_count() * 0.5
            for ref, n, k, c in self._profiles
            if ref != code
        ]
        return sum(scores) / len(scores) if scores else 0.0

    def _char_mask(self, code: str) -> int:
        """The set of ``code``'s characters as bits (one per character, given as first seen)."""
        bits = self._bits
        mask = 0
        for char in set(code):
            bit = bits.get(char)
            if bit is None:
                bit = bits[char] = 1 << len(bits)
            mask |= bit
        return mask

    def _refresh_reference(self) -> None:
        everyone = list(self._programs.values())
        if not everyone:
            return
        size = self.config.diversity_reference_size
        if len(everyone) <= size:
            chosen = everyone
        else:  # greedy max-min diversity from a random start
            rest = list(everyone)
            chosen = [rest.pop(self.rng.randint(0, len(rest) - 1))]
            while len(chosen) < size and rest:
                best_at, best_div = -1, -1.0
                for i, candidate in enumerate(rest):
                    nearest = min(fast_diversity(candidate.code, c.code) for c in chosen)
                    if nearest > best_div:
                        best_at, best_div = i, nearest
                chosen.append(rest.pop(best_at))
        self._reference = [p.id for p in chosen]
        self._reference_code = [p.code for p in chosen]

    # -- generations and migration ------------------------------------------------------------
    async def end_iteration(self, step: Step, outcome: IterationOutcome) -> None:
        for kind, payload in self._events:
            step.event(kind, **payload)
        self._events.clear()
        child = outcome.child
        if outcome.iteration == 0 or child is None or not outcome.admitted:
            return
        island = self._island_of.get(child.id, 0)
        self.generations[island] += 1
        if max(self.generations) - self.last_migration >= self.config.migration_interval:
            self._migrate(step)

    def _migrate(self, step: Step) -> None:
        moves: list[dict[str, Any]] = []
        n = len(self.islands)
        if n >= 2:
            for i in range(n):
                size = self.island_size(i)
                if not size:
                    continue
                count = max(1, int(size * self.config.migration_rate))
                for source in self.island_top(i, count):
                    for target in ((i + 1) % n, (i - 1) % n):
                        moves.append(self._migrate_one(step, source.id, i, target))
        self.last_migration = max(self.generations)
        step.event(
            "migration",
            generation=self.last_migration,
            generations=list(self.generations),
            moves=[m for m in moves if m],
        )
        for kind, payload in self._events:
            step.event(kind, **payload)
        self._events.clear()

    def _migrate_one(self, step: Step, pid: str, source: int, target: int) -> dict[str, Any]:
        program = self._programs.get(pid)
        if program is None or program.metadata.get("migrant"):
            return {}
        move: dict[str, Any] = {"program": pid, "from": source, "to": target}
        if program.code in self._codes[target]:
            return {**move, "skipped": "identical code on the target island"}
        copy = step.new_program(program, metadata={"island": target, "migrant": True})
        self._known[copy.id] = copy
        self._place(copy, target)
        return {**move, "copy": copy.id}

    # -- checkpoint -----------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """The members, their islands and each island's members are lists of chunks
        (:class:`~scaffolds.openevolve.roster.Roster`); a checkpoint written before they were
        (flat ``members``, ``island_of`` and ``islands``) still loads."""
        return {
            "member_chunks": self._members.id_chunks(),
            "island_of_chunks": self._members.value_chunks(),
            "member_layout": self._members.layout(),
            "island_chunks": [island.id_chunks() for island in self.islands],
            "island_layouts": [island.layout() for island in self.islands],
            "cells": [self._grid_state(i) for i in range(len(self.cells))],
            "archive": list(self.archive),
            "best": self.best_id,
            "island_best": list(self.island_best),
            "generations": list(self.generations),
            "last_migration": self.last_migration,
            "feature_stats": self.scaler.state_dict(),
            "reference": list(self._reference),
            **self._cache_dict(),
            "rng": rng_state(self.rng),
        }

    def _grid_state(self, island: int) -> dict[str, str]:
        """Island ``island``'s grid as a checkpoint holds it: the same dict until it changes."""
        state = self._cells_state[island]
        if state is None:
            state = self._cells_state[island] = dict(self.cells[island])
        return state

    def _cache_dict(self) -> dict[str, Any]:
        """The diversity cache's part of the state, built again only after it changed (the
        lists are handed out, never changed: a changed cache gets new ones)."""
        if self._cache_state is None:
            self._cache_state = {
                "diversity": list(self._cache_pairs),
                "stale": [pid for _, pid in (self._diversity[d] for d in self._stale)],
            }
        return self._cache_state

    def load_state_dict(self, state: Mapping[str, Any], programs: Mapping[str, Program]) -> None:
        self._cache_state = None
        self._known = dict(programs)
        self._fitness.clear()
        if "member_chunks" in state:
            self._members = Roster.restore(
                state["member_chunks"], state["island_of_chunks"], state.get("member_layout")
            )
            island_chunks = state["island_chunks"]
            layouts = state.get("island_layouts") or [None] * len(island_chunks)
        else:  # a checkpoint from before the chunks: flat lists
            members = state["members"]
            self._members = Roster(zip(members, state["island_of"], strict=True))
            island_chunks = [[ids] for ids in state["islands"]]
            layouts = [None] * len(island_chunks)
        self._programs = {pid: programs[pid] for pid in self._members}
        self._island_of = dict(self._members.items())
        self.islands = []
        self._codes = []
        for chunks, layout in zip(island_chunks, layouts, strict=True):
            values = [[_weight(self.fitness(programs[pid])) for pid in chunk] for chunk in chunks]
            self.islands.append(Roster.restore(chunks, values, layout))
            self._codes.append(dict(Counter(programs[pid].code for pid in self.islands[-1])))
        self.cells = [dict(grid) for grid in state["cells"]]
        self._cells_state = [None] * len(self.cells)
        nan = float("nan")  # an id of no stored program: not a member, dropped before use
        self.archive = {
            pid: self.fitness(programs[pid]) if pid in programs else nan for pid in state["archive"]
        }
        self.best_id = state["best"]
        self.island_best = list(state["island_best"])
        self.generations = [int(g) for g in state["generations"]]
        self.last_migration = int(state["last_migration"])
        self.scaler.load_state_dict(state["feature_stats"])
        self._reference = list(state["reference"])
        self._reference_code = [programs[pid].code for pid in self._reference]
        self._diversity = {
            _digest(programs[pid].code): (float(value), pid) for pid, value in state["diversity"]
        }
        self._cache_pairs = [[pid, value] for value, pid in self._diversity.values()]
        stale = state.get("stale")  # absent (an earlier checkpoint): any cached value may be
        self._stale = (
            set(self._diversity)
            if stale is None
            else {_digest(programs[pid].code) for pid in stale} & self._diversity.keys()
        )
        rng_from_state(self.rng, state["rng"])
        self._frozen.clear()
        self._events.clear()
        self._cell_index.clear()
        self._rankings.clear()
        self._global = None
        self._settled.clear()
        self._raws.clear()
        self._coords.clear()
        self._archive_changed()
        self._reference_settled = False


class _CellIndex(Mapping[str, str]):
    """One island's members by cell, in island order (a cell's owner is its last member),
    under the scaling of ``version``."""

    def __init__(self, version: int) -> None:
        self.version = version
        self._key_of: dict[str, str] = {}
        self._members: dict[str, dict[str, None]] = {}

    @classmethod
    def of(cls, version: int, pids: Sequence[str], keys: Sequence[str]) -> _CellIndex:
        """The index of ``pids`` (distinct, in island order) in cells ``keys``."""
        index = cls(version)
        index._key_of = dict(zip(pids, keys, strict=True))
        members = index._members
        for pid, key in zip(pids, keys, strict=True):
            cell = members.get(key)
            if cell is None:
                members[key] = {pid: None}
            else:
                cell[pid] = None
        return index

    def add(self, pid: str, key: str) -> None:
        self.remove(pid)
        self._key_of[pid] = key
        self._members.setdefault(key, {})[pid] = None

    def remove(self, pid: str) -> None:
        key = self._key_of.pop(pid, None)
        if key is not None:
            members = self._members[key]
            del members[pid]
            if not members:
                del self._members[key]

    def __getitem__(self, key: str) -> str:
        return next(reversed(self._members[key]))

    def get(self, key: str, default: Any = None) -> Any:
        members = self._members.get(key)
        return default if members is None else next(reversed(members))

    def __iter__(self) -> Iterator[str]:
        return iter(self._members)

    def __len__(self) -> int:
        return len(self._members)


class _Ranking:
    """Programs by ``key`` descending (or ascending), ties in the order they joined: the order
    of ``sorted(members, key=key, reverse=descending)``, kept as programs join (last) and
    leave."""

    def __init__(
        self, key: Callable[[Program], float], members: Sequence[Program], descending: bool
    ) -> None:
        self.key = key
        self._sign = -1.0 if descending else 1.0
        self._entries: list[tuple[float, int, str]] = []  # (-key, arrival, id), ascending
        self._entry: dict[str, tuple[float, int, str]] = {}
        self._nan: set[str] = set()
        self._arrivals = 0
        for program in members:
            self.add(program)

    @property
    def unordered(self) -> bool:
        return bool(self._nan)

    def add(self, program: Program) -> None:
        self.remove(program.id)
        value = self.key(program)
        self._arrivals += 1
        if value != value:  # NaN
            self._nan.add(program.id)
            return
        entry = (self._sign * value, self._arrivals, program.id)
        bisect.insort(self._entries, entry)
        self._entry[program.id] = entry

    def remove(self, pid: str) -> None:
        self._nan.discard(pid)
        entry = self._entry.pop(pid, None)
        if entry is not None:
            del self._entries[bisect.bisect_left(self._entries, entry)]

    def top(self, n: int) -> list[str]:
        return [pid for _, _, pid in self._entries[: max(0, n)]]

    def ids(self) -> Iterator[str]:
        """Every id in rank order (do not change the ranking while iterating)."""
        return (pid for _, _, pid in self._entries)
