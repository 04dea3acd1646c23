"""The start-up canaries start before a run is planned, and still gate its first job.

- ``CappedBackend``: with a gate (the Runtime's canaries), no job reaches the backend before the
  gate passed, and none at all when it fails; starting warm containers does not wait for it.
- ``canaries_started_early``: a verdict nobody takes (the plan failed) is waited for, so the
  canaries' container is gone when the block ends (real Docker).
- A run whose canaries were started early still fails closed on a canary that gets through
  (the CLI test ``test_run_fails_closed_when_a_startup_canary_is_not_contained`` runs the same
  path with the real engine; here, the order of events in one process).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from harness.core.errors import ConfigError, SandboxError
from harness.core.records import EvalResult
from harness.sandbox import early
from harness.sandbox.capacity import CappedBackend, SharedSlot
from harness.sandbox.protocol import Job


class _Inner:
    name = "fake"

    def __init__(self, log: list[str]) -> None:
        self.log = log

    async def run(self, job: Job) -> EvalResult:
        self.log.append("job")
        return EvalResult(status="ok", metrics={"combined_score": 1.0})

    async def prewarm(self, job: Job) -> None:
        self.log.append("prewarm")


def _job() -> Job:
    return Job(mode="sealed", function="evaluate", candidate="", files={})


def test_no_job_runs_before_the_gate_passed() -> None:
    log: list[str] = []
    opened = asyncio.Event()

    async def gate() -> None:
        log.append("gate asked")
        await opened.wait()
        log.append("gate passed")

    async def main() -> None:
        backend = CappedBackend(_Inner(log), SharedSlot(2), "r", gate=gate)  # type: ignore[arg-type]
        await backend.prewarm(_job())  # containers may start: no job
        job = asyncio.ensure_future(backend.run(_job()))
        await asyncio.sleep(0.05)
        assert log == ["prewarm", "gate asked"] and not job.done()
        opened.set()
        assert (await job).status == "ok"

    asyncio.run(main())
    assert log == ["prewarm", "gate asked", "gate passed", "job"]


def test_a_failed_gate_runs_no_job() -> None:
    log: list[str] = []

    async def gate() -> None:
        raise SandboxError("sandbox self-test failed, refusing to run untrusted code")

    async def main() -> None:
        backend = CappedBackend(_Inner(log), SharedSlot(2), "r", gate=gate)  # type: ignore[arg-type]
        with pytest.raises(SandboxError):
            await backend.ready()
        with pytest.raises(SandboxError):
            await backend.run(_job())

    asyncio.run(main())
    assert log == []


def test_the_verdict_is_taken_once() -> None:
    with early.canaries_started_early(enabled=False):
        assert early.take_early_verdict() is None


def _ours(client: Any) -> set[str]:
    from harness.sandbox.ownership import OWNER_LABEL, owner_id

    return {
        c.id
        for c in client.containers.list(
            all=True, ignore_removed=True, filters={"label": f"{OWNER_LABEL}={owner_id()}"}
        )
    }


@pytest.mark.docker
def test_canaries_nobody_took_leave_no_container(sandbox_images: dict[str, str]) -> None:
    import docker

    client = docker.from_env()
    before = _ours(client)
    with pytest.raises(ConfigError), early.canaries_started_early():
        started = early._early
        raise ConfigError("the plan failed")  # as a bad --set would, while they run
    assert started is not None and started.done()
    checks = started.result()
    assert checks and all(c.ok for c in checks), checks  # they ran, in a real container
    assert _ours(client) <= before  # ... which is gone
    assert early.take_early_verdict() is None


@pytest.mark.docker
def test_a_failing_early_canary_fails_the_run_closed(
    sandbox_images: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The verdict of canaries started early is what ``startup_canaries`` judges."""
    from harness.sandbox import doctor

    source, statuses, what, _ = doctor.CANARIES["forgery"]
    monkeypatch.setitem(doctor.CANARIES, "forgery", (source, statuses, what, lambda r: False))
    with early.canaries_started_early():
        with pytest.raises(SandboxError, match="canary:forgery"):
            asyncio.run(doctor.startup_canaries())
        assert early.take_early_verdict() is None  # taken by startup_canaries


@pytest.mark.docker
def test_sigterm_while_they_run_removes_their_container(sandbox_images: dict[str, str]) -> None:
    """SIGTERM during planning (before the run's own handlers): exit 143, after the wait."""
    import os
    import signal

    import docker

    client = docker.from_env()
    before = _ours(client)
    previous = signal.getsignal(signal.SIGTERM)
    with pytest.raises(SystemExit) as stopped, early.canaries_started_early():
        started = early._early
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler raises here
    assert stopped.value.code == 143
    assert started is not None and started.done()
    assert _ours(client) <= before
    assert signal.getsignal(signal.SIGTERM) is previous  # the command's own handling again
