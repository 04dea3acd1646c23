"""Online 1-D bin packing: evolve the priority function that picks a bin for each arriving item.

The trusted evaluator runs the packing loop and calls ``priority(item, bins)`` once per item:
``bins`` holds the remaining capacities of the open bins the item fits in, followed by one fresh
empty bin.  Return one score per bin; the item goes to the highest score.  Fewer bins is better.

Seed program: best fit (prefer the bin the item fills most tightly) plus tunable penalties.
"""

import numpy as np


# EVOLVE-BLOCK-START
def priority(item, bins):
    """Score each bin for ``item``; higher is better."""
    residual = bins - item
    score = -residual
    # Leaving a gap too small for a typical item wastes it; penalise such gaps.
    small_gap = 9.0
    gap_penalty = 12.0
    score = score - np.where((residual > 0) & (residual < small_gap), gap_penalty, 0.0)
    # Mildly prefer bins that are already well filled (relative leftover).
    fill_weight = 4.0
    fill_power = 1.5
    score = score - fill_weight * (residual / bins) ** fill_power
    return score


# EVOLVE-BLOCK-END
