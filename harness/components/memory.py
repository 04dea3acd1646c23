"""``NullMemory``: no cross-candidate knowledge; everything lives in the population."""

from __future__ import annotations

from harness.core.blocks import block
from harness.core.memory import BaseMemory

__all__ = ["NullMemory"]


@block("none", "No cross-candidate memory; everything lives in the population.")
class NullMemory(BaseMemory):
    """Renders nothing and remembers nothing."""
