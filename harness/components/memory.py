"""``NullMemory``: no cross-candidate knowledge; everything lives in the population."""

from __future__ import annotations

from harness.core.memory import BaseMemory

__all__ = ["NullMemory"]


class NullMemory(BaseMemory):
    """Renders nothing and remembers nothing."""
