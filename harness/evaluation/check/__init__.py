"""``galapagos task check``: does a task's evaluator hold up against broken and lying candidates?

The checks, in order (each reports ``pass``, ``fail`` or ``skip`` with a reason; a skip is never
counted as a pass, and the report is ``ok`` only when nothing failed):

``card``                static: the card is complete (metric, best known value with a source)
``files``               static: the seed defines the entry point, the evaluator defines every
                        cascade function, EVOLVE-BLOCK markers are balanced
``seed_evaluates``      the seed scores valid, within the card's time budget, with the declared
                        metrics (``combined_score``, ``validity``, the card's ``metric``)
``deterministic``       the seed scores identically over several runs
``rejects_<variant>``   a battery of broken and adversarial candidates, generated from the seed
                        by wrapping its entry point, all score as failures and never above it
``recomputes_reported`` a candidate returning the seed's data while lying about the values it
                        reports (grossly, and by 1e-9/1e-6/1e-3 relative on the answer's last
                        value) never scores above the seed

Everything candidate-side runs in the sandbox through the evaluator driver, with short per-check
budgets so a whole check stays well under a minute.  Compat (OpenEvolve-style) folders get the
checks that make sense there; the others are skipped with the reason.

Layout: :mod:`._variants` generates the adversarial candidates, :mod:`._static` holds the checks
that only parse files, :mod:`._verdicts` judges sandbox results, :mod:`._run` runs it all
(:func:`check_task`), and :mod:`._report` holds the records.
"""

from __future__ import annotations

from harness.evaluation.check._report import CheckReport, CheckResult, CheckStatus
from harness.evaluation.check._run import (
    DEFAULT_RUNS,
    HANG_WALL_S,
    UNISOLATED_BACKENDS,
    EvaluatorFactory,
    TaskEvaluatorLike,
    check_task,
)
from harness.evaluation.check._static import infer_entry_point
from harness.evaluation.check._variants import VARIANTS, lying_source, variant_source

__all__ = [
    "DEFAULT_RUNS",
    "HANG_WALL_S",
    "UNISOLATED_BACKENDS",
    "VARIANTS",
    "CheckReport",
    "CheckResult",
    "CheckStatus",
    "EvaluatorFactory",
    "TaskEvaluatorLike",
    "check_task",
    "infer_entry_point",
    "lying_source",
    "variant_source",
]
