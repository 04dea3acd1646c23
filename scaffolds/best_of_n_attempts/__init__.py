"""``best_of_n_attempts``: best_of_n whose budget is charged at selection, failures included."""

from __future__ import annotations

from pathlib import Path

from harness.components.canonical import DiffProposerConfig, canonical_scaffold
from harness.components.population import InMemoryPopulationConfig
from harness.components.prompt import DefaultPromptConfig
from harness.core.config import RunConfig
from harness.core.registry import BuildEnv, ScaffoldSpec
from harness.core.scaffold import Scaffold
from scaffolds.best_of_n.policy import BestOfNConfig, BestOfNPolicy

__all__ = ["SPEC", "BestOfNAttemptsPolicy"]


class BestOfNAttemptsPolicy(BestOfNPolicy):
    """Spends one of the parent's N uses on every ``select``, valid child or not."""

    charge_at_selection = True


def build(config: RunConfig, env: BuildEnv) -> Scaffold:
    assert isinstance(config.selection_policy, BestOfNConfig)
    policy = BestOfNAttemptsPolicy(env.rng("selection_policy"), config.selection_policy)
    return canonical_scaffold("best_of_n_attempts", config, env, policy)


SPEC = ScaffoldSpec(
    name="best_of_n_attempts",
    build=build,
    sections={
        "population": InMemoryPopulationConfig,
        "selection_policy": BestOfNConfig,
        "prompt": DefaultPromptConfig,
        "proposer": DiffProposerConfig,
    },
    folder=Path(__file__).parent,
)
