"""Every shipped task passes ``galapagos task check`` in the real Docker sandbox, isolation
checks included; the weak fixture does not."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from harness.evaluation.check import CheckReport, check_task
from harness.evaluation.check._variants import PARTIAL_NAN_VARIANTS

from .conftest import FIXTURES, SHIPPED

pytestmark = pytest.mark.docker

#: Entry points that return only arrays (or answer the scorer's questions) report nothing to
#: inflate, so the lying-report check is skipped for them, with the reason in the report.
NOTHING_REPORTED = {
    "circle_packing_rect",
    "heilbronn_convex",
    "heilbronn_triangle",
    "minmax_distance_2d",
    "minmax_distance_3d",
    "online_bin_packing",
}

#: Lists/arrays in each seed's answer: the single-NaN variants beyond that many are skipped
#: (the answer has no such part to poison), with the reason in the report.
DATA_PARTS = {
    "autocorrelation_c1": 1,
    "autocorrelation_c3": 1,
    "circle_packing": 2,
    "circle_packing_rect": 1,
    "erdos_min_overlap": 1,
    "function_minimization": 0,
    "heilbronn_convex": 1,
    "heilbronn_triangle": 1,
    "minmax_distance_2d": 1,
    "minmax_distance_3d": 1,
    "online_bin_packing": 1,
}


@pytest.fixture(scope="module")
def docker_backend() -> Iterator[object]:
    """One Docker backend for the module; no container may outlive it.

    Without a warm pool: each check moves on to another task (another pool key) after about 20
    jobs, so a pool would pre-start containers that no job takes, while the check already keeps
    the CPUs busy starting the ones it needs.  The jobs and their containers are the same.
    """
    import docker

    from harness.sandbox.docker_backend import DockerBackend
    from harness.sandbox.images import build_images
    from harness.sandbox.pytest_plugin import leftover_containers

    build_images(["python-eval"])
    backend = DockerBackend(pool_size=0)
    yield backend
    backend.close()
    left = leftover_containers(docker.from_env())
    assert not left, f"task check left {len(left)} container(s) behind"


def _skips(report: CheckReport) -> dict[str, str]:
    return {c.name: c.detail for c in report.checks if c.status == "skip"}


@pytest.mark.parametrize("name", SHIPPED)
async def test_shipped_task_passes_task_check(name: str, docker_backend) -> None:
    report = await check_task(name, docker_backend, runs=2)
    failed = {c.name: c.detail for c in report.checks if c.status == "fail"}
    assert report.ok, failed
    expected = {"recomputes_reported"} if name in NOTHING_REPORTED else set()
    expected |= {
        f"rejects_{k}" for k, part in PARTIAL_NAN_VARIANTS.items() if part > DATA_PARTS[name]
    }
    assert set(_skips(report)) == expected


async def test_weak_evaluator_fails_in_docker(docker_backend) -> None:
    report = await check_task(FIXTURES / "weak_task", docker_backend, runs=2)
    failed = {c.name for c in report.checks if c.status == "fail"}
    assert failed == {"rejects_returns_nan", "recomputes_reported"}
    # Under Docker the isolation probes run (and pass) instead of being skipped; only the
    # single-NaN variants are, its answer (x, score) holding no list or array.
    assert set(_skips(report)) == {f"rejects_{k}" for k in PARTIAL_NAN_VARIANTS}


async def test_weak_array_evaluator_fails_in_docker(docker_backend) -> None:
    report = await check_task(FIXTURES / "weak_arrays_task", docker_backend, runs=2)
    failed = {c.name for c in report.checks if c.status == "fail"}
    assert failed == {"rejects_nan_in_part_1", "recomputes_reported"}
