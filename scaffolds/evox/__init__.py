"""``evox``: co-evolve the search strategy with the solutions (SkyDiscover EvoX port).

The composition is ``config.yaml``; this package adds EvoX's blocks: the keep-all
``evolved_strategy_store`` population (the host's canonical copy), the
``evolved_strategy_sampler`` selection (the deployed strategy's answer), the
``operator_labeled_default`` prompt (the default prompt with the DIVERGE/REFINE label as the
parent label) and the ``strategy_history`` memory (history, fallback chain, stagnation trigger
and meta-LLM rewrites).  Sequential, as the reference.

Strategy servers run in the sandbox sessions the run's Runtime serves (``BuildEnv.sessions``,
under the Runtime's container cap, canaries and orphan reaping); a factory can be injected
through ``BuildEnv.extras["strategy_factory"]`` (tests run strategies in local subprocesses
that way).
"""

from __future__ import annotations

from harness.components.blocks import build_default_prompt
from harness.components.population import InMemoryPopulation
from harness.components.prompt import DefaultPromptConfig
from harness.core.blocks import BlockSpec, BuildContext
from harness.core.errors import ConfigError
from harness.evox.chain import StrategyChain
from harness.evox.evolver import StrategyEvolver
from harness.evox.history import StrategyHistory
from harness.evox.labels import DEFAULT_DIVERGE, DEFAULT_REFINE
from harness.evox.records import Labels
from harness.evox.sandbox import LocalStrategyFactory, SessionStrategyFactory, StrategyFactory
from harness.evox.scoring import switch_interval
from harness.evox.strategies import SeedStrategy
from scaffolds.evox.config import EvolvedSamplerConfig, EvoxPopulationConfig, StrategyHistoryConfig
from scaffolds.evox.memory import EvoxMemory, EvoxState
from scaffolds.evox.policy import EvolvedStrategySampler
from strategy_tests import validate

__all__ = ["BLOCKS"]


def _labels(cfg: StrategyHistoryConfig) -> Labels:
    if not cfg.use_labels:
        return Labels("", "")
    return Labels(cfg.diverge_label or DEFAULT_DIVERGE, cfg.refine_label or DEFAULT_REFINE)


def _factory(ctx: BuildContext) -> StrategyFactory:
    injected = ctx.env.extras.get("strategy_factory")
    if injected is not None:
        return injected
    sampler = ctx.config.selection_policy
    assert isinstance(sampler, EvolvedSamplerConfig)  # guaranteed by the block requirements
    sessions = ctx.env.sessions
    if sessions is None:
        raise ConfigError("EvoX needs the run's sandbox sessions (BuildEnv.sessions)")
    if sampler.sandbox in ("auto", sessions.kind):
        return SessionStrategyFactory(sessions, image=sampler.image, run_id=ctx.env.run_id)
    if sampler.sandbox == "local":
        return LocalStrategyFactory()  # asked for explicitly (UNSAFE, and warned about)
    raise ConfigError(
        f"selection_policy.sandbox={sampler.sandbox} with evaluator.sandbox="
        f"{ctx.config.evaluator.sandbox}: strategies run in the sandbox the run's evaluations "
        "use; set evaluator.sandbox: docker (or selection_policy.sandbox: auto)"
    )


def _population(cfg: EvoxPopulationConfig, ctx: BuildContext) -> InMemoryPopulation:
    return InMemoryPopulation()


def _memory(cfg: StrategyHistoryConfig, ctx: BuildContext) -> EvoxMemory:
    sampler = ctx.config.selection_policy
    assert isinstance(sampler, EvolvedSamplerConfig)  # guaranteed by the block requirements
    env = ctx.env
    labels = _labels(cfg)
    history = StrategyHistory(env.rng("memory"), context_size=cfg.meta_context)
    evolver = StrategyEvolver(
        factory=_factory(ctx),
        history=history,
        labels=labels,
        run_seed=env.seed,
        limits=sampler.container.limits(),
        valid=cfg.validation.config(seed=env.seed),
        validate=validate,
        retries=cfg.generation_retries,
        use_prefilter=cfg.prefilter,
        use_insight=cfg.use_llm_stats_insight,
    )
    state = EvoxState(
        chain=StrategyChain(SeedStrategy(env.rng("strategy:seed")), labels),
        evolver=evolver,
        interval=switch_interval(ctx.config.general.max_iterations, cfg.switch_interval),
        threshold=cfg.improvement_threshold,
        task=env.task.description,
        task_context=env.task.model_context or env.task.description,
        generate_operators=cfg.use_labels and cfg.auto_generate_variation_operators,
    )
    return EvoxMemory(history, state, ctx.built["population"])


def _sampler(cfg: EvolvedSamplerConfig, ctx: BuildContext) -> EvolvedStrategySampler:
    return EvolvedStrategySampler(
        ctx.rng("selection_policy"),
        memory=ctx.built["memory"],
        population=ctx.built["population"],
        k=cfg.num_context_programs,
    )


BLOCKS = (
    BlockSpec(
        slot="population",
        name="evolved_strategy_store",
        summary="Keep-all canonical copy of every program (never capped: the deployed strategy "
        "holds its own view, fed by add).",
        build=_population,
        config=EvoxPopulationConfig,
        provides=frozenset({"keep_all", "evolved_strategy_store"}),
        source=__name__,
    ),
    BlockSpec(
        slot="selection_policy",
        name="evolved_strategy_sampler",
        summary="The deployed LLM-written strategy's sample(): parent, context and "
        "DIVERGE/REFINE label, host-checked, with the fallback chain.",
        build=_sampler,
        config=EvolvedSamplerConfig,
        provides=frozenset({"evolved_strategy"}),
        requires={"memory": frozenset({"strategy_history"})},
        source=__name__,
    ),
    BlockSpec(
        slot="prompt",
        name="operator_labeled_default",
        summary="The default prompt with the strategy's variation-operator label (DIVERGE/"
        "REFINE text) under the current program.",
        build=build_default_prompt,
        config=DefaultPromptConfig,
        source=__name__,
    ),
    BlockSpec(
        slot="memory",
        name="strategy_history",
        summary="EvoX's strategy history: J-scored strategies, the fallback chain, the "
        "stagnation trigger and meta-LLM rewrites gated by the pre-filter and Valid(.).",
        build=_memory,
        config=StrategyHistoryConfig,
        provides=frozenset({"strategy_history"}),
        requires={
            "population": frozenset({"evolved_strategy_store"}),
            "selection_policy": frozenset({"evolved_strategy"}),
        },
        source=__name__,
    ),
)
