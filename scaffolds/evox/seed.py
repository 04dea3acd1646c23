"""The built-in seed strategy's source (shipped with the in-container runtime)."""

from __future__ import annotations

from harness.sandbox.sessions import server_source

__all__ = ["seed_source"]


def seed_source() -> str:
    """The source of the trusted seed strategy, as the meta-LLM is shown it."""
    return server_source("galapagos_strategy/seed_strategy.py")
