"""The reusable blocks, one module per slot (``galapagos blocks`` lists them with the scaffolds').

- :mod:`.population`: ``keep_all`` (:class:`InMemoryPopulation`)
- :mod:`.selection`: ``top_k``, ``best_of_n_reuse``, ``best_of_n_attempts``
- :mod:`.prompt`: ``default`` (:class:`DefaultPromptBuilder`, jinja2 templates)
- :mod:`.proposer`: ``diff``, ``full_rewrite``
- :mod:`.evaluator`: ``task`` (the task's own evaluator, sandboxed by the run)
- :mod:`.memory`: ``none``

A method's own blocks live in its scaffold folder (``scaffolds/<name>/``) and are listed in that
package's ``BLOCKS``.
"""

from __future__ import annotations

from harness.components.evaluator import task_evaluator
from harness.components.memory import NullMemory
from harness.components.population import InMemoryPopulation, keep_all
from harness.components.prompt import DefaultPromptBuilder, default_prompt
from harness.components.proposer import (
    DiffProposer,
    FullRewriteProposer,
    diff_proposer,
    full_rewrite_proposer,
)
from harness.components.selection import BestOfNAttemptsPolicy, BestOfNPolicy, TopKPolicy

__all__ = [
    "BLOCKS",
    "BestOfNAttemptsPolicy",
    "BestOfNPolicy",
    "DefaultPromptBuilder",
    "DiffProposer",
    "FullRewriteProposer",
    "InMemoryPopulation",
    "NullMemory",
    "TopKPolicy",
]

BLOCKS = (
    keep_all,
    TopKPolicy,
    BestOfNPolicy,
    BestOfNAttemptsPolicy,
    default_prompt,
    diff_proposer,
    full_rewrite_proposer,
    task_evaluator,
    NullMemory,
)
