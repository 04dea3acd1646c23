"""``topk``: greedy top-1 parent with the next k programs as context (SkyDiscover port).

A composition of reusable blocks only (``config.yaml``): its ``top_k`` selection policy lives in
:mod:`harness.components.selection`.
"""
