"""``topk``: greedy top-1 parent with the next k programs as context (SkyDiscover port).

The composition is ``config.yaml``; this package adds the ``top_k`` selection block.
"""

from __future__ import annotations

from harness.core.blocks import BlockSpec, BuildContext
from scaffolds._rng import block_rng
from scaffolds.topk.policy import TopKConfig, TopKPolicy

__all__ = ["BLOCKS"]


def _build(cfg: TopKConfig, ctx: BuildContext) -> TopKPolicy:
    return TopKPolicy(block_rng(ctx, "selection_policy"), cfg)


BLOCKS = (
    BlockSpec(
        slot="selection_policy",
        name="top_k",
        summary="The best program is the parent; the next k by score are its context.",
        build=_build,
        config=TopKConfig,
        source=__name__,
    ),
)
