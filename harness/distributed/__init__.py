"""Scale-out over a Ray cluster (the ``ray`` extra): evaluations, benchmark cells and hub runs.

A node is a Runtime: on every Ray node that declares the ``galapagos`` resource, one
:class:`~harness.distributed.node.NodeAgent` actor owns that node's
:class:`~harness.runtime.Runtime` (its Docker backend and warm pool, its canaries, its images
built from the recipes' content hashes, its strategy sessions).  The driver's
:class:`~harness.distributed.cluster.Cluster` finds the nodes and their actors;
:class:`~harness.distributed.backend.RayBackend` fans a run's evaluations out over them (task
files travel once per run, by reference; a node lost mid-job is retried elsewhere, never
charged to the candidate); :mod:`~harness.distributed.cells` runs whole runs (benchmark cells,
the hub's queue) on the nodes, their every commit going to the head's store through
:class:`~harness.distributed.store.StoreActor`.  See docs/scale-out.md.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["Cluster", "RayBackend", "connect"]

_LAZY = {
    "Cluster": "harness.distributed.cluster",
    "connect": "harness.distributed.cluster",
    "RayBackend": "harness.distributed.backend",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'harness.distributed' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
