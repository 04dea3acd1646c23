"""The RNG a ported block draws from: its own seeded stream, or in reference mode
(``loop.reference_mode``) one stream seeded with the run seed, as the references seed their
global ``random`` (``random.seed(random_seed)``) and draw everything from it."""

from __future__ import annotations

import random

from harness.core.blocks import BuildContext

__all__ = ["block_rng"]


def block_rng(ctx: BuildContext, name: str) -> random.Random:
    """``ctx.rng(name)``, or in reference mode ``random.Random(seed)`` (blocks that share one
    stream in the reference get the same object from whoever builds first)."""
    if ctx.config.loop.reference_mode:
        return random.Random(ctx.env.seed)
    return ctx.rng(name)
