"""``topk``: greedy top-1 parent with the next k programs as context (SkyDiscover port)."""

from __future__ import annotations

from pathlib import Path

from harness.components.canonical import DiffProposerConfig, canonical_scaffold
from harness.components.population import InMemoryPopulationConfig
from harness.components.prompt import DefaultPromptConfig
from harness.core.config import RunConfig
from harness.core.registry import BuildEnv, ScaffoldSpec
from harness.core.scaffold import Scaffold
from scaffolds.topk.policy import TopKConfig, TopKPolicy

__all__ = ["SPEC"]


def build(config: RunConfig, env: BuildEnv) -> Scaffold:
    assert isinstance(config.selection_policy, TopKConfig)
    policy = TopKPolicy(env.rng("selection_policy"), config.selection_policy)
    return canonical_scaffold("topk", config, env, policy)


SPEC = ScaffoldSpec(
    name="topk",
    build=build,
    sections={
        "population": InMemoryPopulationConfig,
        "selection_policy": TopKConfig,
        "prompt": DefaultPromptConfig,
        "proposer": DiffProposerConfig,
    },
    folder=Path(__file__).parent,
)
