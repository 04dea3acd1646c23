"""Compat shim for ``from openevolve.evaluation_result import EvaluationResult``."""

from galapagos_sandbox.result import EvaluationResult

__all__ = ["EvaluationResult"]
