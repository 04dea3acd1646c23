"""The unsafe local backend: same runner and protocol, process-group kill, no secrets."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections.abc import AsyncIterator

import pytest

from harness.core.errors import ConfigError
from harness.sandbox import make_backend
from harness.sandbox.local_backend import LocalBackend
from tests.sandbox.helpers import program, sealed_job


@pytest.fixture
async def local() -> AsyncIterator[LocalBackend]:
    backend = LocalBackend()
    yield backend
    await backend.aclose()


async def test_a_sealed_job_runs_through_the_real_runner(local: LocalBackend) -> None:
    result = await local.run(sealed_job(program("print('hi')\nreturn 0.75")))
    assert result.status == "ok" and result.metrics == {"combined_score": 0.75}
    assert result.artifacts["stdout_tail"] == "hi\n"


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.slow
async def test_timeout_kills_the_whole_process_group(local: LocalBackend, tmp_path) -> None:
    marker = tmp_path / "grandchild.pid"
    body = f"""
if os.fork() == 0:
    open({str(marker)!r}, 'w').write(str(os.getpid()))
    time.sleep(3600)
time.sleep(3600)
"""
    result = await local.run(sealed_job(program(body, "import os, time")))
    assert result.status == "timeout"
    pid = int(marker.read_text())
    for _ in range(100):
        if not _running(pid):
            break
        time.sleep(0.05)
    assert not _running(pid), "the candidate's child outlived the job"


@pytest.mark.parametrize(
    "body",
    ["    while True:\n        pass\n", "    import time\n    time.sleep(3600)\n"],
    ids=["busy", "sleeping"],
)
async def test_the_runner_answers_a_hung_evaluator_by_itself(
    local: LocalBackend, monkeypatch: pytest.MonkeyPatch, body: str
) -> None:
    # The host would wait a minute past the budget: an answer sooner is the runner's watchdog.
    monkeypatch.setattr("harness.sandbox.local_backend.HOST_GRACE_S", 60.0)
    job = sealed_job("", evaluator=f"def evaluate(candidate):\n{body}".encode())
    fast = dataclasses.replace(job, limits=dataclasses.replace(job.limits, wall_s=0.5))
    result = await asyncio.wait_for(local.run(fast), timeout=20)
    assert result.status == "timeout" and result.timed_out
    assert result.error == "the evaluation exceeded its 0.5 s budget"


async def test_secrets_are_not_passed_on(
    local: LocalBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-honeypot")
    result = await local.run(
        sealed_job(
            program("return json.dumps(dict(os.environ))", "import json, os"), function="probe"
        )
    )
    assert "sk-honeypot" not in json.loads(result.artifacts["report"]).values()


async def test_crashes_and_floods_are_reported(local: LocalBackend) -> None:
    assert (await local.run(sealed_job(program("os._exit(0)", "import os")))).status == "crash"
    flood = await local.run(sealed_job(program("while True:\n    print('x' * 999)")))
    assert flood.status == "output_limit"


async def test_compat_mode_runs_an_openevolve_evaluator(local: LocalBackend) -> None:
    evaluator = (
        b"from openevolve.evaluation_result import EvaluationResult\n"
        b"def evaluate(path):\n"
        b"    ns = {}\n    exec(open(path).read(), ns)\n"
        b"    return EvaluationResult({'combined_score': ns['solve']()}, {'k': 'v'})\n"
    )
    job = sealed_job("def solve():\n    return 0.5\n", evaluator=evaluator)
    result = await local.run(job.__class__(**{**job.__dict__, "mode": "compat"}))
    assert result.status == "ok", result.error
    assert result.metrics == {"combined_score": 0.5} and result.artifacts["k"] == "v"


def test_make_backend_names_the_choices() -> None:
    with pytest.raises(ConfigError, match="docker, local"):
        make_backend("chroot")


def test_the_local_backend_warns_that_it_is_unsafe(caplog: pytest.LogCaptureFixture) -> None:
    backend = make_backend("local")
    assert isinstance(backend, LocalBackend)
    assert "UNSAFE" in caplog.text and "UNSAFE" in (LocalBackend.__doc__ or "")
    backend._executor.shutdown()


@pytest.mark.docker
def test_make_backend_without_an_engine_names_the_setup_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from harness.core.errors import SandboxUnavailable

    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with pytest.raises(SandboxUnavailable, match="scripts/docker-engine.sh"):
        make_backend("docker")
