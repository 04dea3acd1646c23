"""``openevolve``: island MAP-Elites with three-tier parent sampling (OpenEvolve 0.4.0 port).

The composition is ``config.yaml``; this package adds the ``map_elites_islands`` population,
the ``three_tier_explore_exploit`` selection policy and the ``openevolve_template`` prompt.
"""

from __future__ import annotations

from harness.core.blocks import BlockSpec, BuildContext
from scaffolds.openevolve.population import MapElitesIslandsConfig, MapElitesIslandsPopulation
from scaffolds.openevolve.prompt import OpenEvolvePromptBuilder, OpenEvolvePromptConfig
from scaffolds.openevolve.selection import ThreeTierConfig, ThreeTierPolicy

__all__ = ["BLOCKS"]

#: The prompt takes its program counts from the three-tier policy's section (as the card has it).
THREE_TIER = frozenset({"three_tier"})


def _population(cfg: MapElitesIslandsConfig, ctx: BuildContext) -> MapElitesIslandsPopulation:
    return MapElitesIslandsPopulation(cfg, ctx.rng("population"))


def _selection(cfg: ThreeTierConfig, ctx: BuildContext) -> ThreeTierPolicy:
    population = ctx.built_as("population", MapElitesIslandsPopulation)
    return ThreeTierPolicy(ctx.rng("selection_policy"), cfg, population)


def _prompt(cfg: OpenEvolvePromptConfig, ctx: BuildContext) -> OpenEvolvePromptBuilder:
    population = ctx.built_as("population", MapElitesIslandsPopulation)
    # The card keeps the prompt's sizes under selection_policy: num_inspirations doubles as the
    # prompt's num_top_programs, num_diverse is its num_diverse_programs.
    sizes = ctx.built_as("selection_policy", ThreeTierPolicy).config
    return OpenEvolvePromptBuilder(
        cfg, population, num_top=sizes.num_inspirations, num_diverse=sizes.num_diverse
    )


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
        provides=THREE_TIER,
        requires={"population": frozenset({"map_elites"})},
        source=__name__,
    ),
    BlockSpec(
        slot="prompt",
        name="openevolve_template",
        summary="OpenEvolve's diff prompt: fitness, feature coordinates and focus areas, the "
        "parent's execution output, previous attempts, top, diverse and inspiration programs "
        "of its island, the current program, the SEARCH/REPLACE task.",
        build=_prompt,
        config=OpenEvolvePromptConfig,
        requires={"population": frozenset({"map_elites"}), "selection_policy": THREE_TIER},
        source=__name__,
    ),
)
