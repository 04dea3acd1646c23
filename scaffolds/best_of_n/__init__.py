"""``best_of_n``: N valid attempts at one parent, then the global best (SkyDiscover port)."""

from __future__ import annotations

from pathlib import Path

from harness.components.canonical import DiffProposerConfig, canonical_scaffold
from harness.components.population import InMemoryPopulationConfig
from harness.components.prompt import DefaultPromptConfig
from harness.core.config import RunConfig
from harness.core.registry import BuildEnv, ScaffoldSpec
from harness.core.scaffold import Scaffold
from scaffolds.best_of_n.policy import BestOfNConfig, BestOfNPolicy

__all__ = ["SPEC"]


def build(config: RunConfig, env: BuildEnv) -> Scaffold:
    assert isinstance(config.selection_policy, BestOfNConfig)
    policy = BestOfNPolicy(env.rng("selection_policy"), config.selection_policy)
    return canonical_scaffold("best_of_n", config, env, policy)


SPEC = ScaffoldSpec(
    name="best_of_n",
    build=build,
    sections={
        "population": InMemoryPopulationConfig,
        "selection_policy": BestOfNConfig,
        "prompt": DefaultPromptConfig,
        "proposer": DiffProposerConfig,
    },
    folder=Path(__file__).parent,
)
