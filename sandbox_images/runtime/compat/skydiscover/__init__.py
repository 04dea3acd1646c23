"""Compat shim: just enough of ``skydiscover`` for its evaluators to import unchanged."""
