"""``best_of_n``: N valid attempts at one parent, then the global best (SkyDiscover port).

The composition is ``config.yaml``; this package adds the ``best_of_n_reuse`` selection block.
"""

from __future__ import annotations

from harness.core.blocks import BlockSpec, BuildContext
from scaffolds._rng import block_rng
from scaffolds.best_of_n.policy import BestOfNConfig, BestOfNPolicy

__all__ = ["BLOCKS"]


def _build(cfg: BestOfNConfig, ctx: BuildContext) -> BestOfNPolicy:
    return BestOfNPolicy(block_rng(ctx, "selection_policy"), cfg)


BLOCKS = (
    BlockSpec(
        slot="selection_policy",
        name="best_of_n_reuse",
        summary="Reuse one parent until N admitted children, then commit to the global best; "
        "context re-sampled from the top pool each step.",
        build=_build,
        config=BestOfNConfig,
        source=__name__,
    ),
)
