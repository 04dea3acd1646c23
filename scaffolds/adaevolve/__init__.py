"""``adaevolve``: G-signal intensity, UCB islands, paradigm breakthroughs (SkyDiscover AdaEvolve).

The composition is ``config.yaml``; this package adds AdaEvolve's blocks: the
``adaevolve_archipelago`` population (per-island quality-diversity archives), the
``adaevolve_adaptive`` selection (G intensity, modes, UCB, migration, spawning), the
``adaevolve_paradigms`` memory (stagnation window, guide-model ideas) and the ``adaevolve``
prompt (search guidance, EXPLORE/EXPLOIT labels).  Sequential, as the reference.
"""

from __future__ import annotations

from harness.core.blocks import BlockSpec, BuildContext
from scaffolds._rng import block_rng
from scaffolds.adaevolve.memory import ParadigmMemory, ParadigmMemoryConfig
from scaffolds.adaevolve.policy import AdaEvolvePolicy, AdaEvolvePolicyConfig
from scaffolds.adaevolve.population import AdaEvolveArchipelago, ArchipelagoConfig
from scaffolds.adaevolve.prompt import AdaEvolvePromptBuilder, AdaEvolvePromptConfig

__all__ = ["BLOCKS"]

ISLANDS = frozenset({"adaevolve_islands"})


def _population(cfg: ArchipelagoConfig, ctx: BuildContext) -> AdaEvolveArchipelago:
    return AdaEvolveArchipelago(cfg)


def _memory(cfg: ParadigmMemoryConfig, ctx: BuildContext) -> ParadigmMemory:
    return ParadigmMemory(cfg, ctx.built_as("population", AdaEvolveArchipelago), ctx.env.task)


def _policy(cfg: AdaEvolvePolicyConfig, ctx: BuildContext) -> AdaEvolvePolicy:
    population = ctx.built_as("population", AdaEvolveArchipelago)
    # Optional: without the paradigm memory (memory: none, or another block) the policy runs
    # without breakthrough ideas; nothing else in it depends on the memory.
    memory = ctx.built["memory"]
    return AdaEvolvePolicy(
        block_rng(ctx, "selection_policy"),
        cfg,
        population,
        memory if isinstance(memory, ParadigmMemory) else None,
    )


def _prompt(cfg: AdaEvolvePromptConfig, ctx: BuildContext) -> AdaEvolvePromptBuilder:
    # Optional: the prompt block requires no population; over a population without AdaEvolve's
    # islands it leaves the sibling section out.
    population = ctx.built["population"]
    return AdaEvolvePromptBuilder(
        cfg, population if isinstance(population, AdaEvolveArchipelago) else None
    )


BLOCKS = (
    BlockSpec(
        slot="population",
        name="adaevolve_archipelago",
        summary="Islands of quality-diversity archives: k-NN code-distance novelty, protected "
        "elites, crowding admission against the most similar member; genealogy for siblings.",
        build=_population,
        config=ArchipelagoConfig,
        provides=ISLANDS,
        source=__name__,
    ),
    BlockSpec(
        slot="selection_policy",
        name="adaevolve_adaptive",
        summary="G-signal intensity splits explore/exploit/balanced parents on the UCB-chosen "
        "island; ring migration and island spawning on low global productivity.",
        build=_policy,
        config=AdaEvolvePolicyConfig,
        requires={"population": ISLANDS},
        source=__name__,
    ),
    BlockSpec(
        slot="memory",
        name="adaevolve_paradigms",
        summary="Global-improvement window; on stagnation a guide-model call for breakthrough "
        "ideas, each used a bounded number of times, with a tried-idea history.",
        build=_memory,
        config=ParadigmMemoryConfig,
        provides=frozenset({"paradigms"}),
        requires={"population": ISLANDS},
        source=__name__,
    ),
    BlockSpec(
        slot="prompt",
        name="adaevolve",
        summary="AdaEvolve's diff prompt: search guidance (feedback, paradigm, siblings, retry "
        "error) after the current program, EXPLORE/EXPLOIT parent labels.",
        build=_prompt,
        config=AdaEvolvePromptConfig,
        source=__name__,
    ),
)
