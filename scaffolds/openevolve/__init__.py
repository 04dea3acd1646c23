"""``openevolve``: island MAP-Elites with three-tier parent sampling (OpenEvolve 0.4.0 port).

The composition is ``config.yaml``; this package adds the ``map_elites_islands`` population,
the ``three_tier_explore_exploit`` selection policy and the ``openevolve_template`` prompt.
"""

from __future__ import annotations

from harness.core.blocks import BlockSpec, BuildContext
from scaffolds._rng import block_rng
from scaffolds.openevolve.population import MapElitesIslandsConfig, MapElitesIslandsPopulation
from scaffolds.openevolve.prompt import OpenEvolvePromptBuilder, OpenEvolvePromptConfig
from scaffolds.openevolve.selection import ThreeTierConfig, ThreeTierPolicy

__all__ = ["BLOCKS"]

#: The prompt takes its program counts from the three-tier policy's section (as the card has it).
THREE_TIER = frozenset({"three_tier"})


def _population(cfg: MapElitesIslandsConfig, ctx: BuildContext) -> MapElitesIslandsPopulation:
    return MapElitesIslandsPopulation(cfg, block_rng(ctx, "population"))


def _selection(cfg: ThreeTierConfig, ctx: BuildContext) -> ThreeTierPolicy:
    population = ctx.built_as("population", MapElitesIslandsPopulation)
    reference = ctx.config.loop.reference_mode
    return ThreeTierPolicy(
        population.rng if reference else ctx.rng("selection_policy"),  # one shared stream
        cfg,
        population,
        reference_mode=reference,
        max_iterations=ctx.config.general.max_iterations,
    )


def _prompt(cfg: OpenEvolvePromptConfig, ctx: BuildContext) -> OpenEvolvePromptBuilder:
    population = ctx.built_as("population", MapElitesIslandsPopulation)
    # The card keeps the prompt's sizes under selection_policy: num_inspirations doubles as the
    # prompt's num_top_programs, num_diverse is its num_diverse_programs.
    policy = ctx.built_as("selection_policy", ThreeTierPolicy)
    # Full rewrites when the proposer expects whole programs (diff_based_evolution: false).
    diff_mode = getattr(ctx.built.get("proposer"), "response_kind", "diff") != "rewrite"
    return OpenEvolvePromptBuilder(
        cfg,
        population,
        num_top=policy.config.num_inspirations,
        num_diverse=policy.config.num_diverse,
        diff_mode=diff_mode,
        context=policy,
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
        summary="OpenEvolve's prompt, diff or full rewrite as the proposer expects: fitness, "
        "feature coordinates and focus areas, the parent's execution output, previous attempts, "
        "top, diverse and inspiration programs of its island, the current program; a folder's "
        "template_dir templates replace ours.",
        build=_prompt,
        config=OpenEvolvePromptConfig,
        requires={"population": frozenset({"map_elites"}), "selection_policy": THREE_TIER},
        source=__name__,
    ),
)
