"""EvoX on the host: LLM-written search strategies that never run here.

    verdict = prefilter(code)                              # static gate, no container
    report = await strategy_tests.validate(code, factory=make_factory("docker"), labels=…)
    strategy = RemoteStrategy(sid, code, factory.client(limits), labels=…, seed=…, …)
    await strategy.boot(); await strategy.add(programs); answer = await strategy.sample(4)
    selection = resolve(answer, population=…, known=strategy.known, k=4, labels=…)

Modules: :mod:`.prefilter` (RestrictedPython-based gate), :mod:`.transport` / :mod:`.client`
(the RPC to a strategy server in a sandbox session of :mod:`harness.sandbox.sessions`),
:mod:`.records` (wire
records, the answer check), :mod:`.strategies` (seed and remote strategies, call logs),
:mod:`.chain` (fallback chain), :mod:`.scoring` (J, window, stagnation), :mod:`.descriptor`
(population-state descriptor), :mod:`.history` (strategy history = the scaffold's Memory),
:mod:`.meta` (rewrite prompt), :mod:`.evolver` (one rewrite: LLM → gates → deployment),
:mod:`.sandbox` (factories), :mod:`.labels` (DIVERGE/REFINE texts).  The Valid(·) suite lives
in the top-level ``strategy_tests`` package.  Names are imported on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

import harness.sandbox  # noqa: F401  (puts galapagos_sandbox on sys.path first)

if TYPE_CHECKING:
    from harness.evox.chain import StrategyChain
    from harness.evox.client import StrategyCallError, StrategyClient
    from harness.evox.descriptor import describe_population, describe_window
    from harness.evox.evolver import Rewrite, StrategyEvolver
    from harness.evox.history import StrategyHistory, StrategyRecord
    from harness.evox.labels import default_labels
    from harness.evox.prefilter import PrefilterResult, prefilter
    from harness.evox.records import Answer, Labels, program_record, resolve
    from harness.evox.sandbox import (
        ContainerLimits,
        LocalStrategyFactory,
        SessionStrategyFactory,
        StrategyFactory,
        make_factory,
    )
    from harness.evox.scoring import Stagnation, WindowScorer, switch_interval, window_score
    from harness.evox.strategies import RemoteStrategy, SeedStrategy, Strategy

_WHERE = {
    "StrategyChain": "chain",
    "StrategyCallError": "client",
    "StrategyClient": "client",
    "describe_population": "descriptor",
    "describe_window": "descriptor",
    "Rewrite": "evolver",
    "StrategyEvolver": "evolver",
    "StrategyHistory": "history",
    "StrategyRecord": "history",
    "default_labels": "labels",
    "PrefilterResult": "prefilter",
    "prefilter": "prefilter",
    "Answer": "records",
    "Labels": "records",
    "program_record": "records",
    "resolve": "records",
    "ContainerLimits": "sandbox",
    "LocalStrategyFactory": "sandbox",
    "SessionStrategyFactory": "sandbox",
    "StrategyFactory": "sandbox",
    "make_factory": "sandbox",
    "Stagnation": "scoring",
    "WindowScorer": "scoring",
    "switch_interval": "scoring",
    "window_score": "scoring",
    "RemoteStrategy": "strategies",
    "SeedStrategy": "strategies",
    "Strategy": "strategies",
}

__all__ = [
    "Answer",
    "ContainerLimits",
    "Labels",
    "LocalStrategyFactory",
    "PrefilterResult",
    "RemoteStrategy",
    "Rewrite",
    "SeedStrategy",
    "SessionStrategyFactory",
    "Stagnation",
    "Strategy",
    "StrategyCallError",
    "StrategyChain",
    "StrategyClient",
    "StrategyEvolver",
    "StrategyFactory",
    "StrategyHistory",
    "StrategyRecord",
    "WindowScorer",
    "default_labels",
    "describe_population",
    "describe_window",
    "make_factory",
    "prefilter",
    "program_record",
    "resolve",
    "switch_interval",
    "window_score",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'harness.evox' has no attribute {name!r}")
    return getattr(importlib.import_module(f"harness.evox.{module}"), name)
