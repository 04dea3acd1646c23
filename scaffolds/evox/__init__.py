"""``evox``: co-evolve the search strategy with the solutions (SkyDiscover EvoX port).

Components: keep-all population (the host's canonical copy), the evolved strategy as the
selection policy (run in its own sandbox), the default prompt with the DIVERGE/REFINE label as
the parent label, the diff proposer, the task evaluator, and the strategy history as memory.
Sequential, as the reference.
"""

from __future__ import annotations

from pathlib import Path

from harness.components.canonical import DiffProposerConfig, build_proposer
from harness.components.population import InMemoryPopulation
from harness.components.prompt import DefaultPromptBuilder, DefaultPromptConfig
from harness.core.config import RunConfig
from harness.core.registry import BuildEnv, ScaffoldSpec
from harness.core.scaffold import Scaffold
from harness.evox.chain import StrategyChain
from harness.evox.evolver import StrategyEvolver
from harness.evox.history import StrategyHistory
from harness.evox.labels import DEFAULT_DIVERGE, DEFAULT_REFINE
from harness.evox.records import Labels
from harness.evox.sandbox import StrategyFactory, make_factory
from harness.evox.scoring import switch_interval
from harness.evox.strategies import SeedStrategy
from harness.llm.offline.strategy_faults import directive
from scaffolds.evox.config import EvolvedSamplerConfig, EvoxPopulationConfig, StrategyHistoryConfig
from scaffolds.evox.policy import EvolvedStrategySampler
from scaffolds.evox.scaffold import EvoxScaffold, EvoxState

__all__ = ["SPEC", "build", "build_evox"]


def _labels(cfg: StrategyHistoryConfig) -> Labels:
    if not cfg.use_labels:
        return Labels("", "")
    return Labels(cfg.diverge_label or DEFAULT_DIVERGE, cfg.refine_label or DEFAULT_REFINE)


def build_evox(config: RunConfig, env: BuildEnv, factory: StrategyFactory) -> EvoxScaffold:
    """The scaffold with an explicit strategy sandbox factory (tests pass their own)."""
    sampler = config.selection_policy
    history_cfg = config.memory
    pop_cfg, prompt_cfg, proposer_cfg = config.population, config.prompt, config.proposer
    assert isinstance(sampler, EvolvedSamplerConfig)
    assert isinstance(history_cfg, StrategyHistoryConfig)
    assert isinstance(pop_cfg, EvoxPopulationConfig)
    assert isinstance(prompt_cfg, DefaultPromptConfig)
    assert isinstance(proposer_cfg, DiffProposerConfig)
    if not proposer_cfg.diff_based and prompt_cfg.diff_mode:
        prompt_cfg = prompt_cfg.model_copy(update={"diff_mode": False})
    labels = _labels(history_cfg)
    history = StrategyHistory(env.rng("memory"), context_size=history_cfg.meta_context)
    offline = config.llm.provider == "offline"
    evolver = StrategyEvolver(
        factory=factory,
        history=history,
        labels=labels,
        run_seed=env.seed,
        limits=sampler.container.limits(),
        valid=history_cfg.validation.config(seed=env.seed),
        retries=history_cfg.generation_retries,
        use_prefilter=history_cfg.prefilter,
        fault_directive=directive(history_cfg.offline_faults) if offline else "",
    )
    state = EvoxState(
        chain=StrategyChain(SeedStrategy(env.rng("strategy:seed")), labels),
        evolver=evolver,
        interval=switch_interval(config.general.max_iterations, history_cfg.switch_interval),
        threshold=history_cfg.improvement_threshold,
        k=sampler.num_context_programs,
        task=env.task_description,
    )
    return EvoxScaffold(
        name="evox",
        population=InMemoryPopulation(),
        selection=EvolvedStrategySampler(env.rng("selection_policy")),
        prompt_builder=DefaultPromptBuilder(prompt_cfg),
        proposer=build_proposer(proposer_cfg, env.language),
        evaluator=env.evaluator,
        memory=history,
        evox=state,
    )


def build(config: RunConfig, env: BuildEnv) -> Scaffold:
    sampler = config.selection_policy
    assert isinstance(sampler, EvolvedSamplerConfig)
    sandbox = config.evaluator.sandbox if sampler.sandbox == "auto" else sampler.sandbox
    return build_evox(config, env, make_factory(sandbox, image=sampler.image, run_id=env.run_id))


SPEC = ScaffoldSpec(
    name="evox",
    build=build,
    sections={
        "population": EvoxPopulationConfig,
        "selection_policy": EvolvedSamplerConfig,
        "prompt": DefaultPromptConfig,
        "proposer": DiffProposerConfig,
        "memory": StrategyHistoryConfig,
    },
    folder=Path(__file__).parent,
)
