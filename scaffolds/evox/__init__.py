"""``evox``: co-evolve the search strategy with the solutions (SkyDiscover EvoX port).

The composition is ``config.yaml``; this package is the whole method:

- its blocks: the ``evolved_strategy_store`` population (:mod:`.population`, the host's
  canonical copy), the ``evolved_strategy_sampler`` selection (:mod:`.policy`, the deployed
  strategy: fallback chain and where servers run), the ``strategy_history`` memory
  (:mod:`.memory`: history, J scoring, stagnation trigger, meta-LLM rewrites) and the
  ``operator_labeled_default`` prompt (the default prompt under the name the card gives it: the
  DIVERGE/REFINE label is the parent label it already shows);
- the strategy side: :mod:`.prefilter` (RestrictedPython-based static gate) with
  :mod:`.allowlist` and :mod:`._bindings`, :mod:`.transport` / :mod:`.client` (the RPC to a
  strategy server in a sandbox session of :mod:`harness.sandbox.sessions`), :mod:`.factory`
  (where servers run), :mod:`.records` (wire records, the answer check), :mod:`.strategies`
  (seed and remote strategies, call logs), :mod:`.seed`, :mod:`.chain` (fallback chain);
- the meta side: :mod:`.scoring` (J, window, stagnation), :mod:`.descriptor`
  (population-state descriptor), :mod:`.history`, :mod:`.meta` (rewrite prompt), :mod:`.guide`
  (guide-model insight and labels), :mod:`.labels`, :mod:`.evolver` (one rewrite: LLM → gates
  → deployment), :mod:`.valid` (Valid(·) limits).

The Valid(·) suite itself is the top-level ``strategy_tests`` package (handed to the evolver);
strategy servers run in the sandbox sessions the run's Runtime serves (under its container cap,
canaries and orphan reaping).  Sequential, as the reference.
"""

from __future__ import annotations

import harness.sandbox  # noqa: F401  (puts galapagos_sandbox on sys.path first)
from harness.components.prompt import DefaultPromptBuilder, DefaultPromptConfig, default_prompt
from harness.core.blocks import block
from harness.core.proposer import BaseProposer
from scaffolds.evox.memory import EvoxMemory
from scaffolds.evox.policy import EvolvedStrategySampler
from scaffolds.evox.population import StrategyStore

__all__ = ["BLOCKS"]


@block(
    "operator_labeled_default",
    "The default prompt with the strategy's variation-operator label (DIVERGE/REFINE text) "
    "under the current program.",
)
def operator_labeled_default(
    config: DefaultPromptConfig, *, proposer: BaseProposer
) -> DefaultPromptBuilder:
    return default_prompt(config, proposer=proposer)


BLOCKS = (StrategyStore, EvolvedStrategySampler, EvoxMemory, operator_labeled_default)
