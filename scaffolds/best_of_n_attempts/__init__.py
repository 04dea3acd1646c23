"""``best_of_n_attempts``: best_of_n whose budget is charged at selection, failures included.

The composition is ``config.yaml``; this package adds the ``best_of_n_attempts`` selection block.
"""

from __future__ import annotations

from harness.core.blocks import BlockSpec, BuildContext
from scaffolds._rng import block_rng
from scaffolds.best_of_n.policy import BestOfNConfig, BestOfNPolicy

__all__ = ["BLOCKS", "BestOfNAttemptsPolicy"]


class BestOfNAttemptsPolicy(BestOfNPolicy):
    """Spends one of the parent's N uses on every ``select``, valid child or not."""

    charge_at_selection = True


def _build(cfg: BestOfNConfig, ctx: BuildContext) -> BestOfNAttemptsPolicy:
    return BestOfNAttemptsPolicy(block_rng(ctx, "selection_policy"), cfg)


BLOCKS = (
    BlockSpec(
        slot="selection_policy",
        name="best_of_n_attempts",
        summary="Best-of-N whose per-parent budget is spent at every selection, failed "
        "attempts included (fixed parent turnover).",
        build=_build,
        config=BestOfNConfig,
        source=__name__,
    ),
)
