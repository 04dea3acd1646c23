"""Warm pool: pre-started single-use containers, preloaded modules, nothing left at close."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from harness.sandbox.docker_backend import DockerBackend
from tests.sandbox.helpers import program, sealed_job

pytestmark = pytest.mark.docker


@pytest.fixture
async def pooled(sandbox_images: dict[str, str]) -> AsyncIterator[DockerBackend]:
    backend = DockerBackend(pool_size=2, pool_creators=2)
    yield backend
    await backend.aclose()


async def wait_idle(backend: DockerBackend, n: int) -> None:
    for _ in range(600):
        if backend.pool.idle() >= n:
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the warm pool did not fill")


async def test_jobs_run_in_prestarted_containers_used_once(pooled: DockerBackend) -> None:
    job = sealed_job(program("return 0.5"))
    await pooled.prewarm(job)
    await wait_idle(pooled, 2)
    results = [await pooled.run(job) for _ in range(4)]
    assert [r.metrics["combined_score"] for r in results] == [0.5] * 4
    assert pooled.pool.hits >= 2
    assert len(set(pooled.history)) == len(pooled.history)  # every container is fresh
    assert len(pooled.history) >= 4


async def test_preloaded_modules_are_already_imported(pooled: DockerBackend) -> None:
    probe = program("return float('numpy' in sys.modules)", "import sys")
    job = sealed_job(probe, preload=("numpy",))
    await pooled.prewarm(job)
    await wait_idle(pooled, 1)
    assert (await pooled.run(job)).metrics["combined_score"] == 1.0
    assert (await pooled.run(sealed_job(probe))).metrics["combined_score"] == 0.0


async def test_a_candidate_cannot_affect_the_next_job(pooled: DockerBackend) -> None:
    poison = program("open('/tmp/poison', 'w').write('x')\nreturn 0.0")
    check = program("return float(os.path.exists('/tmp/poison'))", "import os")
    await pooled.prewarm(sealed_job(check))
    await wait_idle(pooled, 2)
    assert (await pooled.run(sealed_job(poison))).status == "ok"
    assert (await pooled.run(sealed_job(check))).metrics["combined_score"] == 0.0


async def test_concurrent_jobs_each_get_their_own_container(pooled: DockerBackend) -> None:
    job = sealed_job(program("time.sleep(0.5)\nreturn float(os.getpid())", "import os, time"))
    results = await asyncio.gather(*(pooled.run(job) for _ in range(4)))
    assert all(r.status == "ok" for r in results)


async def test_close_removes_idle_containers(sandbox_images: dict[str, str]) -> None:
    backend = DockerBackend(pool_size=3, pool_creators=2)
    await backend.prewarm(sealed_job(program("return 1.0")))
    await wait_idle(backend, 3)
    await backend.aclose()
    left = backend.client.containers.list(
        all=True, filters={"label": f"galapagos.backend={backend.instance}"}
    )
    assert left == []


async def test_warm_containers_install_the_task_and_report_its_failures_per_job(
    pooled: DockerBackend,
) -> None:
    good = sealed_job(program("return 0.5"))
    broken = sealed_job(program("return 0.5"), evaluator=b"raise ValueError('no table')\n")
    for job in (good, broken):
        await pooled.prewarm(job)
    await wait_idle(pooled, 4)  # containers of the broken task start (and wait) all the same
    outcome = await pooled.run(broken)
    assert outcome.status == "crash" and "ValueError: no table" in outcome.error
    assert (await pooled.run(good)).metrics["combined_score"] == 0.5  # tasks never mix
    assert pooled.pool.hits == 2
