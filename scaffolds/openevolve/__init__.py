"""``openevolve``: island MAP-Elites with three-tier parent sampling (OpenEvolve 0.4.0 port).

The composition is ``config.yaml``; this package adds the ``map_elites_islands`` population,
the ``three_tier_explore_exploit`` selection policy and the ``openevolve_template`` prompt.
"""

from __future__ import annotations

from harness.core.blocks import BlockSpec, BuildContext
from scaffolds.openevolve.population import MapElitesIslandsConfig, MapElitesIslandsPopulation
from scaffolds.openevolve.selection import ThreeTierConfig, ThreeTierPolicy

__all__ = ["BLOCKS"]


def _population(cfg: MapElitesIslandsConfig, ctx: BuildContext) -> MapElitesIslandsPopulation:
    return MapElitesIslandsPopulation(cfg, ctx.rng("population"))


def _selection(cfg: ThreeTierConfig, ctx: BuildContext) -> ThreeTierPolicy:
    population = ctx.built["population"]
    assert isinstance(population, MapElitesIslandsPopulation)  # the composition check ensures it
    return ThreeTierPolicy(ctx.rng("selection_policy"), cfg, population)


BLOCKS: tuple[BlockSpec, ...] = (
    BlockSpec(
        slot="population",
        name="map_elites_islands",
        summary="Per-island MAP-Elites grids (one elite per cell), a global elite archive, a "
        "population cap and lazy ring migration (OpenEvolve's ProgramDatabase).",
        build=_population,
        config=MapElitesIslandsConfig,
        provides=frozenset({"islands", "map_elites"}),
        source=__name__,
    ),
    BlockSpec(
        slot="selection_policy",
        name="three_tier_explore_exploit",
        summary="Round-robin islands; parent by explore / exploit (archive) / fitness-weighted "
        "tiers; inspirations from the island's best, top, nearby cells and random fill.",
        build=_selection,
        config=ThreeTierConfig,
        requires={"population": frozenset({"map_elites"})},
        source=__name__,
    ),
)
