"""``best_of_n_attempts``: best_of_n whose budget is charged at selection, failures included.

A composition of reusable blocks only (``config.yaml``): its ``best_of_n_attempts`` selection
policy lives in :mod:`harness.components.selection`.
"""
