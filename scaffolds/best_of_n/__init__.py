"""``best_of_n``: N valid attempts at one parent, then the global best (SkyDiscover port).

A composition of reusable blocks only (``config.yaml``): its ``best_of_n_reuse`` selection policy
lives in :mod:`harness.components.selection`.
"""
