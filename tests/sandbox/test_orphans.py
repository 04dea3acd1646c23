"""An orchestrator killed with SIGKILL mid-evaluation leaves containers the next start reaps."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from harness.sandbox.docker_backend import DockerBackend
from harness.sandbox.ownership import OWNER_LABEL, owner_alive

pytestmark = [pytest.mark.docker, pytest.mark.slow]

ORCHESTRATOR = textwrap.dedent("""
    import asyncio, sys
    from harness.sandbox.docker_backend import DockerBackend
    from harness.sandbox.protocol import Job, Limits

    EVALUATOR = b"def evaluate(c):\\n    return {'combined_score': float(c.call('solve'))}\\n"
    SLEEPER = "import time\\ndef solve():\\n    time.sleep(120)\\n"

    async def main():
        backend = DockerBackend(pool_size=2, pool_creators=1)
        print(backend.owner, flush=True)
        job = Job(mode="sealed", function="evaluate", candidate=SLEEPER,
                  files={"evaluator.py": EVALUATOR},
                  limits=Limits(wall_s=120, memory_mb=128, tmpfs_mb=16))
        await backend.prewarm(job)
        await backend.run(job)

    asyncio.run(main())
""")


def test_a_killed_orchestrator_leaves_orphans_that_the_next_backend_reaps(
    sandbox_images: dict[str, str],
) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", ORCHESTRATOR],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    reaper = None
    try:
        owner = proc.stdout.readline().strip()
        assert owner, "the orchestrator did not start"
        import docker

        client = docker.from_env()
        running: list = []
        for _ in range(300):  # the evaluation container is up and its candidate is sleeping
            running = client.containers.list(
                ignore_removed=True,
                filters={"label": f"{OWNER_LABEL}={owner}", "status": "running"},
            )
            if len(running) >= 2:  # the job's container and a warm one
                break
            time.sleep(0.1)
        assert running, "no container was started"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        assert not owner_alive(owner)
        orphans = client.containers.list(
            all=True, ignore_removed=True, filters={"label": f"{OWNER_LABEL}={owner}"}
        )
        assert orphans, "the SIGKILLed orchestrator's containers should still exist"
        reaper = DockerBackend(pool_size=0)
        assert {c.name for c in orphans} <= set(reaper.reaped)
        left = client.containers.list(
            all=True, ignore_removed=True, filters={"label": f"{OWNER_LABEL}={owner}"}
        )
        assert left == []
    finally:
        if proc.poll() is None:
            proc.kill()
        if reaper is not None:
            reaper.close()


def test_startup_never_reaps_containers_of_live_processes(sandbox_images: dict[str, str]) -> None:
    first = DockerBackend(pool_size=1, pool_creators=1)
    try:
        from tests.sandbox.helpers import program, sealed_job

        first.pool.want(first._key(sealed_job(program("return 1.0"))))
        for _ in range(300):
            if first.pool.idle():
                break
            time.sleep(0.1)
        assert first.pool.idle() == 1
        second = DockerBackend(pool_size=0)
        second.close()
        assert first.pool.idle() == 1
        label = f"galapagos.backend={first.instance}"
        assert first.client.containers.list(ignore_removed=True, filters={"label": label})
    finally:
        first.close()
