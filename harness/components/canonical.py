"""The canonical wiring shared by the greedy scaffolds: keep-all population, default prompt,
diff proposer with full-rewrite fallback, no memory.  A scaffold supplies only its policy."""

from __future__ import annotations

from pydantic import Field

from harness.components.memory import NullMemory
from harness.components.population import InMemoryPopulation, InMemoryPopulationConfig
from harness.components.prompt import DefaultPromptBuilder, DefaultPromptConfig
from harness.components.proposer import DiffProposer, FullRewriteProposer
from harness.core.config import RunConfig, StrictModel
from harness.core.proposer import BaseProposer
from harness.core.registry import BuildEnv
from harness.core.scaffold import Scaffold
from harness.core.selection import BaseSelectionPolicy

__all__ = ["DiffProposerConfig", "build_proposer", "canonical_scaffold"]


class DiffProposerConfig(StrictModel):
    #: ``true``: SEARCH/REPLACE edits; ``false``: the model rewrites the whole program.
    diff_based: bool = True
    #: Accept a fenced full program when a diff answer has no SEARCH/REPLACE block.
    allow_full_rewrite: bool = True
    max_solution_length: int = Field(60000, ge=100)


def build_proposer(config: DiffProposerConfig, language: str) -> BaseProposer:
    if not config.diff_based:
        return FullRewriteProposer(
            max_solution_length=config.max_solution_length, language=language
        )
    return DiffProposer(
        allow_full_rewrite=config.allow_full_rewrite,
        max_solution_length=config.max_solution_length,
        language=language,
    )


def canonical_scaffold(
    name: str, config: RunConfig, env: BuildEnv, selection: BaseSelectionPolicy
) -> Scaffold:
    pop_cfg = config.population
    assert isinstance(pop_cfg, InMemoryPopulationConfig)
    prompt_cfg = config.prompt
    assert isinstance(prompt_cfg, DefaultPromptConfig)
    proposer_cfg = config.proposer
    assert isinstance(proposer_cfg, DiffProposerConfig)
    if not proposer_cfg.diff_based and prompt_cfg.diff_mode:
        prompt_cfg = prompt_cfg.model_copy(update={"diff_mode": False})
    return Scaffold(
        name=name,
        population=InMemoryPopulation(capacity=pop_cfg.capacity),
        selection=selection,
        prompt_builder=DefaultPromptBuilder(prompt_cfg),
        proposer=build_proposer(proposer_cfg, env.language),
        evaluator=env.evaluator,
        memory=NullMemory(),
    )
