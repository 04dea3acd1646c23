"""Valid(·): the behavioural suite that gates every EvoX strategy before it is deployed.

Every check of SkyDiscover's validator (§2.6.3: load/structure, construction, single add, bulk
add + 10 samples, error-string metrics + 5 samples, metric immutability, migration of base
``Program`` instances + 3 samples, the ``num_context_programs`` contract) plus what it misses
(empty and one-program populations, parent never in its own context, allowed labels, tolerance
of failed or missing metrics, determinism under a seed, a 1,000-program add/sample stress,
bounded CPU per call, memory and threads).  The strategy runs in its own sandbox and process and
is driven over the same RPC as at run time; the judge (:mod:`strategy_tests.judge`) keeps the
canonical copies of what it sent and reads time, CPU, memory and tasks from outside.  Results
are reported per check.

    clients = lambda: factory.client(config.limits)
    report = await validate_source(code, clients=clients, labels=labels, config=config,
                                   gate=prefilter)
    report.passed, report.feedback(), report.to_dict()

The config (``scaffolds.evox.valid.ValidConfig``), the client factory and the gate are the
caller's: this package imports nothing from ``scaffolds.evox`` at run time, and EvoX's evolver
nothing from it (the ``strategy_history`` block hands it :func:`validate`).
"""

from __future__ import annotations

from strategy_tests.judge import LimitExceeded
from strategy_tests.report import CheckResult, ValidationReport
from strategy_tests.suite import CHECK_NAMES, validate, validate_source

__all__ = [
    "CHECK_NAMES",
    "CheckResult",
    "LimitExceeded",
    "ValidationReport",
    "validate",
    "validate_source",
]
