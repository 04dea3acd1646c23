"""One local multi-node Ray cluster for the whole ``ray`` suite (it takes 10-35 s to start here).

A head that runs nothing (no CPU for tasks) and two worker nodes that declare the ``galapagos``
resource, each with two container slots, all on loopback with usage statistics off.  On this
machine every "node" shares the one Docker engine: each node's agent still owns its own backend,
pool, canaries and reaping, as on a real cluster (see docs/scale-out.md).  Without Ray the suite
is skipped locally and fails under ``CI=true``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from tests.service.conftest import auth, hub_store, token  # noqa: F401  (the hub's fixtures)

# Ray reads these when it starts: loopback addresses, no usage statistics.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

WORKER = {"num_cpus": 1, "resources": {"galapagos": 1, "galapagos_slots": 2}}


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("the ray suite needs the ray extra (pip install -e '.[dev,ray]')")
        pytest.skip("ray is not installed (the ray extra)")
    return ray


@pytest.fixture(scope="package")
def ray_cluster() -> Iterator[Any]:
    """The cluster (``ray.cluster_utils.Cluster``), this process connected as its driver; shut
    down after the suite's last test (the rest of the test command runs without it)."""
    ray = _ray()
    from ray.cluster_utils import Cluster

    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 0, "include_dashboard": False},
    )
    workers = [cluster.add_node(**WORKER) for _ in range(2)]
    ray.init(address=cluster.address, namespace="galapagos", log_to_driver=False)
    cluster.wait_for_nodes()
    cluster.galapagos_workers = workers  # type: ignore[attr-defined]
    try:
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()
