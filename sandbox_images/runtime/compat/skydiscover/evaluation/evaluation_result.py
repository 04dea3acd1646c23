"""Compat shim for ``from skydiscover.evaluation.evaluation_result import EvaluationResult``."""

from galapagos_sandbox.result import EvaluationResult

__all__ = ["EvaluationResult"]
