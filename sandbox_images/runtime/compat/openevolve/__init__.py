"""Compat shim: just enough of ``openevolve`` for its evaluators to import unchanged."""

from galapagos_sandbox.result import EvaluationResult

__all__ = ["EvaluationResult"]
