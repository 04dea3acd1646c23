"""Valid(·): the behavioural suite that gates every EvoX strategy before it is deployed.

Every check of SkyDiscover's validator (§2.6.3: load/structure, construction, single add, bulk
add + 10 samples, error-string metrics + 5 samples, metric immutability, migration of base
``Program`` instances + 3 samples, the ``num_context_programs`` contract) plus what it misses
(empty and one-program populations, parent never in its own context, allowed labels, tolerance
of failed or missing metrics, determinism under a seed, a 1,000-program add/sample stress,
bounded time per call and bounded memory).  The strategy runs in its own sandbox and is driven
over the same RPC as at run time; results are reported per check.

    report = await validate_source(code, factory=DockerStrategyFactory(), labels=labels)
    report.passed, report.feedback(), report.to_dict()
"""

from __future__ import annotations

from strategy_tests.context import ValidConfig
from strategy_tests.report import CheckResult, ValidationReport
from strategy_tests.suite import CHECK_NAMES, validate, validate_source

__all__ = [
    "CHECK_NAMES",
    "CheckResult",
    "ValidConfig",
    "ValidationReport",
    "validate",
    "validate_source",
]
