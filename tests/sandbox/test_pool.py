"""Warm pool: pre-started containers, preloaded modules, a fresh box per job, nothing left at
close; zygote containers come back after a job and retire after ``reuse`` jobs or an anomaly."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator

import pytest

from harness.sandbox.docker_backend import ZYGOTE_SPARE as SPARE
from harness.sandbox.docker_backend import DockerBackend
from tests.sandbox.helpers import program, sealed_job

pytestmark = pytest.mark.docker

#: What a candidate reports about the places an earlier candidate could have left something.
LOOK_AROUND = program(
    """
seen = sorted(os.listdir('/tmp')) + sorted(os.listdir('/dev/shm'))
open('/tmp/left-behind', 'w').write('x')
open('/dev/shm/left-behind', 'w').write('x')
return float(len(seen))
""",
    "import os",
)


@pytest.fixture
async def pooled(sandbox_images: dict[str, str]) -> AsyncIterator[DockerBackend]:
    backend = DockerBackend(pool_size=2, pool_creators=2)
    yield backend
    await backend.aclose()


async def wait_idle(backend: DockerBackend, n: int) -> None:
    assert backend.pool is not None
    for _ in range(600):
        if backend.pool.idle() >= n:
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the warm pool did not fill")


async def test_containers_come_back_and_every_job_gets_a_fresh_box(pooled: DockerBackend) -> None:
    job = sealed_job(LOOK_AROUND)
    await pooled.prewarm(job)
    await wait_idle(pooled, SPARE)
    results = [await pooled.run(job) for _ in range(6)]
    # Each candidate saw only its own private directory: nothing of the ones before it.
    assert [r.metrics["combined_score"] for r in results] == [1.0] * 6, [r.error for r in results]
    served = list(pooled.served_by)
    assert len(set(served)) < len(served)  # containers served several jobs…
    assert len(pooled.history) <= 3  # …so few were started
    assert pooled.pool is not None and pooled.pool.returned >= 3


async def test_single_use_containers_when_reuse_is_off(sandbox_images: dict[str, str]) -> None:
    backend = DockerBackend(pool_size=2, pool_creators=2, reuse=1)
    try:
        job = sealed_job(LOOK_AROUND)
        await backend.prewarm(job)
        await wait_idle(backend, 2)
        results = [await backend.run(job) for _ in range(4)]
        assert [r.metrics["combined_score"] for r in results] == [1.0] * 4
        assert backend.pool is not None and backend.pool.hits >= 2
        assert len(set(backend.served_by)) == 4  # every job in a container of its own
        assert not backend.boxes
    finally:
        await backend.aclose()


async def test_a_zygote_retires_after_its_jobs(sandbox_images: dict[str, str]) -> None:
    backend = DockerBackend(pool_size=1, pool_creators=1, reuse=3)
    try:
        job = sealed_job(program("return 0.5"))
        await backend.prewarm(job)
        results = [await backend.run(job) for _ in range(7)]
        assert all(r.metrics.get("combined_score") == 0.5 for r in results)
        served = list(backend.served_by)
        assert max(served.count(c) for c in set(served)) == 3
        assert len(set(served)) == 3
    finally:
        await backend.aclose()


async def test_a_timeout_retires_the_container(pooled: DockerBackend) -> None:
    sleeper = sealed_job(program("time.sleep(60)", "import time"))
    honest = sealed_job(program("return 0.5"))
    await pooled.prewarm(honest)
    await wait_idle(pooled, SPARE)
    assert (await pooled.run(sleeper)).status == "timeout"
    for _ in range(4):
        assert (await pooled.run(honest)).metrics["combined_score"] == 0.5
    served = list(pooled.served_by)
    assert served[0] not in served[1:]  # the container that timed out served nothing more


async def test_preloaded_modules_are_already_imported(pooled: DockerBackend) -> None:
    probe = program("return float('numpy' in sys.modules)", "import sys")
    job = sealed_job(probe, preload=("numpy",))
    await pooled.prewarm(job)
    await wait_idle(pooled, 1)
    assert (await pooled.run(job)).metrics["combined_score"] == 1.0
    assert (await pooled.run(job)).metrics["combined_score"] == 1.0  # in a recycled container
    assert (await pooled.run(sealed_job(probe))).metrics["combined_score"] == 0.0


async def test_a_candidate_cannot_affect_the_next_job(pooled: DockerBackend) -> None:
    poison = program("open('/tmp/poison', 'w').write('x')\nreturn 0.0")
    check = program("return float(os.path.exists('/tmp/poison'))", "import os")
    await pooled.prewarm(sealed_job(check))
    await wait_idle(pooled, SPARE)
    assert (await pooled.run(sealed_job(poison))).status == "ok"
    for _ in range(3):  # whichever container runs it, the poisoned one included
        assert (await pooled.run(sealed_job(check))).metrics["combined_score"] == 0.0


async def test_concurrent_jobs_each_get_their_own_container(pooled: DockerBackend) -> None:
    job = sealed_job(program("time.sleep(0.5)\nreturn float(os.getpid())", "import os, time"))
    results = await asyncio.gather(*(pooled.run(job) for _ in range(4)))
    assert all(r.status == "ok" for r in results)
    assert len(set(pooled.served_by)) == 4


async def test_close_removes_idle_containers(sandbox_images: dict[str, str]) -> None:
    backend = DockerBackend(pool_size=3, pool_creators=2)
    await backend.prewarm(sealed_job(program("return 1.0")))
    assert backend.pool is not None
    await wait_idle(backend, backend.pool.spare)
    await backend.run(sealed_job(program("return 1.0")))  # one on its way back, too
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
    await wait_idle(pooled, 2 * SPARE)  # containers of the broken task start all the same
    outcome = await pooled.run(broken)
    assert outcome.status == "crash" and "ValueError: no table" in outcome.error
    assert (await pooled.run(broken)).status == "crash"  # again, in a fresh box
    assert (await pooled.run(good)).metrics["combined_score"] == 0.5  # tasks never mix
    assert pooled.pool is not None and pooled.pool.hits == 3


async def test_an_engine_that_refuses_boxes_gets_single_use_containers(
    sandbox_images: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    """Where the kernel or security profile refuses user namespaces (simulated with a seccomp
    profile that refuses ``unshare``), every job still runs, in a container of its own."""
    from harness.sandbox import seccomp

    refusing = seccomp.profile()
    refusing["syscalls"] = [r for r in refusing["syscalls"] if r["names"] != ["unshare"]]
    backend = DockerBackend(pool_size=1, pool_creators=1)
    backend._profile = json.dumps(refusing)
    try:
        with caplog.at_level(logging.WARNING, logger="harness.sandbox.docker_backend"):
            results = [await backend.run(sealed_job(program("return 0.5"))) for _ in range(3)]
        assert [r.metrics.get("combined_score") for r in results] == [0.5] * 3
        assert not backend.boxes
        assert "refuses the namespaces" in caplog.text
        assert len(set(backend.served_by)) == 3
    finally:
        await backend.aclose()


async def test_candidates_of_one_container_draw_different_random_numbers(
    sandbox_images: dict[str, str],
) -> None:
    """The zygote imported numpy.random before forking: each candidate still starts from fresh
    entropy, as a process of its own would."""
    backend = DockerBackend(pool_size=1, pool_creators=0)
    try:
        job = sealed_job(
            program("return float(numpy.random.random())", "import numpy"),
            preload=("numpy",),
        )
        scores = [(await backend.run(job)).metrics["combined_score"] for _ in range(4)]
        assert len(set(backend.served_by)) == 1  # one container, four boxes
        assert len(set(scores)) == 4
    finally:
        await backend.aclose()
