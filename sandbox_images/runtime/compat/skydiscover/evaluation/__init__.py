"""Compat shim for ``from skydiscover.evaluation import EvaluationResult``."""

from galapagos_sandbox.result import EvaluationResult

__all__ = ["EvaluationResult"]
