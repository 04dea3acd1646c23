"""The reusable named blocks (``galapagos blocks`` lists them with the scaffolds' own).

Each :class:`~harness.core.blocks.BlockSpec` names an implementation of one slot, its config
model and what it provides; scaffold packages add their own blocks in their ``BLOCKS``.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from harness.components.memory import NullMemory
from harness.components.population import InMemoryPopulation, InMemoryPopulationConfig
from harness.components.prompt import DefaultPromptBuilder, DefaultPromptConfig
from harness.components.proposer import DiffProposer, FullRewriteProposer
from harness.core.blocks import BlockSpec, BuildContext
from harness.core.config import EvaluatorConfig
from harness.core.evaluator import BaseEvaluator
from harness.core.proposer import BaseProposer
from harness.core.validation import StrictModel

__all__ = [
    "BLOCKS",
    "DiffProposerConfig",
    "RewriteProposerConfig",
    "build_default_prompt",
    "build_diff_proposer",
    "build_keep_all",
]


class DiffProposerConfig(StrictModel):
    #: ``true``: SEARCH/REPLACE edits; ``false``: the model rewrites the whole program.
    diff_based: bool = True
    #: Accept a fenced full program when a diff answer has no SEARCH/REPLACE block.
    allow_full_rewrite: bool = True
    #: Apply the SEARCH/REPLACE blocks that match and skip the others (OpenEvolve); ``false``
    #: rejects a diff with any unmatched block.
    allow_partial_diff: bool = False
    max_solution_length: int = Field(60000, ge=100)


class RewriteProposerConfig(StrictModel):
    max_solution_length: int = Field(60000, ge=100)


def build_keep_all(cfg: InMemoryPopulationConfig, ctx: BuildContext) -> InMemoryPopulation:
    return InMemoryPopulation(capacity=cfg.capacity)


def build_diff_proposer(cfg: DiffProposerConfig, ctx: BuildContext) -> BaseProposer:
    language = ctx.env.task.language
    if not cfg.diff_based:
        return FullRewriteProposer(max_solution_length=cfg.max_solution_length, language=language)
    return DiffProposer(
        allow_full_rewrite=cfg.allow_full_rewrite,
        max_solution_length=cfg.max_solution_length,
        language=language,
        allow_partial_diff=cfg.allow_partial_diff,
    )


def _build_rewrite(cfg: RewriteProposerConfig, ctx: BuildContext) -> FullRewriteProposer:
    return FullRewriteProposer(
        max_solution_length=cfg.max_solution_length, language=ctx.env.task.language
    )


def build_default_prompt(cfg: DefaultPromptConfig, ctx: BuildContext) -> DefaultPromptBuilder:
    """The default builder; it asks for whole programs when the proposer expects them."""
    proposer = ctx.built.get("proposer")
    if cfg.diff_mode and getattr(proposer, "response_kind", "diff") == "rewrite":
        cfg = cfg.model_copy(update={"diff_mode": False})
    return DefaultPromptBuilder(cfg)


def _task_evaluator(cfg: EvaluatorConfig, ctx: BuildContext) -> BaseEvaluator:
    return ctx.env.evaluator


def _no_memory(cfg: Any, ctx: BuildContext) -> NullMemory:
    return NullMemory()


_HERE = __name__

BLOCKS = (
    BlockSpec(
        slot="population",
        name="keep_all",
        summary="Every admitted program, ranked by score; optionally capped (worst evicted).",
        build=build_keep_all,
        config=InMemoryPopulationConfig,
        provides=frozenset({"keep_all"}),
        source=_HERE,
    ),
    BlockSpec(
        slot="prompt",
        name="default",
        summary="Task, metrics, feedback, previous attempts, context programs, current program "
        "last; asks for SEARCH/REPLACE edits or a whole program as the proposer expects.",
        build=build_default_prompt,
        config=DefaultPromptConfig,
        source=_HERE,
    ),
    BlockSpec(
        slot="proposer",
        name="diff",
        summary="One LLM call; SEARCH/REPLACE edits applied by whole-line matching, with an "
        "optional full-rewrite fallback; no-op, syntax and length checks.",
        build=build_diff_proposer,
        config=DiffProposerConfig,
        provides=frozenset({"diff"}),
        source=_HERE,
    ),
    BlockSpec(
        slot="proposer",
        name="full_rewrite",
        summary="One LLM call answering the whole program (first language fence); no-op, "
        "syntax and length checks.",
        build=_build_rewrite,
        config=RewriteProposerConfig,
        provides=frozenset({"rewrite"}),
        source=_HERE,
    ),
    BlockSpec(
        slot="evaluator",
        name="task",
        summary="The task's own evaluator, every candidate and cascade stage in a fresh "
        "locked-down container (configured by the run's evaluator section).",
        build=_task_evaluator,
        config=EvaluatorConfig,
        provides=frozenset({"task"}),
        source=_HERE,
    ),
    BlockSpec(
        slot="memory",
        name="none",
        summary="No cross-candidate memory; everything lives in the population.",
        build=_no_memory,
        source=_HERE,
    ),
)
