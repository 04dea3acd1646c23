"""Limits and isolation, against real containers: each limit is hit and reported for what it is."""

from __future__ import annotations

import asyncio
import dataclasses
import json

import pytest

from harness.core.scoring import is_failure
from harness.sandbox.hardening import CANDIDATE_UID, ContainerSpec, create_hardened_container
from harness.sandbox.protocol import Limits
from tests.sandbox.helpers import (
    EVALUATOR,
    HISTORY_EVALUATOR,
    HISTORY_SOURCE,
    SMALL,
    assert_feedback_independent_of_process_history,
    program,
    sealed_job,
)

pytestmark = pytest.mark.docker


def report(result: object) -> dict:
    """The JSON a probing candidate returned as its ``report`` artifact."""
    assert result.status == "ok", result.error
    return json.loads(result.artifacts["report"])


async def test_timeout_kills_the_candidate_and_is_reported(docker_backend: object) -> None:
    result = await docker_backend.run(sealed_job(program("time.sleep(60)", "import time")))
    assert result.status == "timeout" and result.timed_out
    assert result.metrics["timeout"] is True and is_failure(result.metrics, result.artifacts)


async def test_a_hanging_evaluator_is_stopped_by_the_runner_watchdog(
    docker_backend: object,
) -> None:
    evaluator = b"def evaluate(candidate):\n    while True:\n        pass\n"
    result = await docker_backend.run(sealed_job("", evaluator=evaluator))
    assert result.status == "timeout" and "budget" in result.error


async def test_the_host_deadline_kills_a_container_whose_runner_froze(
    docker_backend: object,
) -> None:
    # The (trusted) evaluator stops its own process: no watchdog can answer any more.
    evaluator = b"import os, signal\ndef evaluate(c):\n    os.kill(os.getpid(), signal.SIGSTOP)\n"
    result = await docker_backend.run(sealed_job("", evaluator=evaluator))
    assert result.status == "timeout" and result.timed_out
    assert result.duration_s >= SMALL.wall_s


async def test_memory_bomb_is_reported_as_oom(docker_backend: object) -> None:
    result = await docker_backend.run(sealed_job(program("x = bytearray(1 << 30)\nreturn 1.0")))
    assert result.status == "oom" and result.oom_killed
    assert is_failure(result.metrics, result.artifacts)


async def test_memory_bomb_in_the_evaluator_process_is_reported_as_oom(
    docker_backend: object,
) -> None:
    evaluator = b"def evaluate(c):\n    x = [bytearray(1 << 20) for _ in range(4096)]\n"
    result = await docker_backend.run(sealed_job("", evaluator=evaluator))
    assert result.status == "oom" and result.oom_killed


async def test_pids_limit_stops_a_fork_bomb(docker_backend: object) -> None:
    body = """
n = 0
try:
    for _ in range(500):
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
        n += 1
except OSError:
    pass
return float(n)
"""
    result = await docker_backend.run(sealed_job(program(body, "import os, time")))
    assert result.status == "ok", result.error
    assert 0 < result.metrics["combined_score"] < SMALL.pids


async def test_output_flood_is_cut_and_reported(docker_backend: object) -> None:
    result = await docker_backend.run(sealed_job(program("while True:\n    print('x' * 4096)")))
    assert result.status == "output_limit" and result.output_truncated
    assert len(result.stderr_tail) < 64 * 1024


async def test_tmp_is_a_small_tmpfs(docker_backend: object) -> None:
    body = """
written = 0
try:
    with open('/tmp/fill', 'wb') as f:
        for _ in range(1000):
            f.write(b'x' * (1 << 20))
            f.flush()
            written += 1 << 20
except OSError as exc:
    return json.dumps({'written': written, 'errno': exc.errno})
return json.dumps({'written': written})
"""
    out = report(
        await docker_backend.run(sealed_job(program(body, "import json"), function="probe"))
    )
    assert 0 < out["written"] <= SMALL.tmpfs_mb << 20
    assert out["errno"] in (27, 28)  # EFBIG (fsize ulimit) or ENOSPC (tmpfs full)


async def test_root_filesystem_is_read_only(docker_backend: object) -> None:
    body = """
out = {}
for path in ['/pwned', '/usr/pwned', '/etc/passwd', '/opt/galapagos/runtime/pwned']:
    try:
        open(path, 'a').close()
        out[path] = 'WRITABLE'
    except OSError as exc:
        out[path] = exc.errno
return json.dumps(out)
"""
    out = report(
        await docker_backend.run(sealed_job(program(body, "import json"), function="probe"))
    )
    assert set(out.values()) <= {13, 30}  # EACCES, EROFS


async def test_there_is_no_network(docker_backend: object) -> None:
    body = """
out = {'interfaces': sorted(l.split(':')[0].strip() for l in open('/proc/net/dev').readlines()[2:])}
for host in ['1.1.1.1', '172.17.0.1', '8.8.8.8']:
    try:
        socket.create_connection((host, 53), timeout=1).close()
        out[host] = 'OPEN'
    except OSError as exc:
        out[host] = 'blocked'
try:
    socket.getaddrinfo('example.com', 80)
    out['dns'] = 'RESOLVED'
except OSError:
    out['dns'] = 'blocked'
return json.dumps(out)
"""
    out = report(
        await docker_backend.run(sealed_job(program(body, "import json, socket"), function="probe"))
    )
    assert out.pop("interfaces") == ["lo"]
    assert set(out.values()) == {"blocked"}


async def test_the_candidate_runs_unprivileged(docker_backend: object) -> None:
    body = """
status = dict(l.split(':', 1) for l in open('/proc/self/status'))
return json.dumps({'uid': os.getresuid(), 'gid': os.getresgid(), 'groups': os.getgroups(),
    'eff': status['CapEff'].strip(), 'prm': status['CapPrm'].strip(),
    'nnp': status['NoNewPrivs'].strip()})
"""
    out = report(
        await docker_backend.run(sealed_job(program(body, "import json, os"), function="probe"))
    )
    assert out["uid"] == [CANDIDATE_UID] * 3 and out["gid"] == [CANDIDATE_UID] * 3
    assert out["groups"] == [] and out["nnp"] == "1"
    assert out["eff"] == out["prm"] == "0000000000000000"


async def test_the_candidate_cannot_see_the_runner_or_its_files(docker_backend: object) -> None:
    body = """
out = {}
runner = os.getppid()
for path in ['/run/galapagos', f'/proc/{runner}/fd', f'/proc/{runner}/environ',
             f'/proc/{runner}/mem', '/proc/1/environ', '/etc/shadow']:
    try:
        if path.endswith(('fd', 'galapagos')):
            os.listdir(path)
        else:
            open(path, 'rb').read(1)
        out[path] = 'READ'
    except OSError as exc:
        out[path] = exc.errno
return json.dumps(out)
"""
    out = report(
        await docker_backend.run(sealed_job(program(body, "import json, os"), function="probe"))
    )
    assert "READ" not in out.values(), out


async def test_file_size_and_open_files_are_limited(docker_backend: object) -> None:
    body = """
out = {}
try:
    with open('big', 'wb') as f:
        f.write(b'x' * (8 << 20))
    out['big'] = 'WRITTEN'
except OSError as exc:
    out['big'] = exc.errno
files = []
try:
    while len(files) < 10000:
        files.append(open('/dev/null'))
except OSError as exc:
    out['nofile_errno'] = exc.errno
out['opened'] = len(files)
return json.dumps(out)
"""
    out = report(
        await docker_backend.run(sealed_job(program(body, "import json"), function="probe"))
    )
    assert out["big"] == 27  # EFBIG: fsize is 4 MiB here
    assert out["nofile_errno"] == 24 and out["opened"] < SMALL.nofile


async def test_the_environment_is_minimal(
    docker_backend: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-honeypot-123")
    monkeypatch.setenv("GALAPAGOS_SECRET", "honeypot")
    out = report(
        await docker_backend.run(
            sealed_job(
                program("return json.dumps(dict(os.environ))", "import json, os"), function="probe"
            )
        )
    )
    assert "honeypot" not in json.dumps(out)
    # HOSTNAME is Docker's own ("sandbox", set by the hardening, not the container id).
    assert out["HOSTNAME"] == "sandbox"
    assert set(out) <= {
        "HOSTNAME",
        "PATH",
        "LANG",
        "LC_ALL",
        "HOME",
        "TMPDIR",
        "PYTHONPATH",
        "PYTHONDONTWRITEBYTECODE",
        "OPENBLAS_NUM_THREADS",
        "OMP_NUM_THREADS",
        "MKL_NUM_THREADS",
        "NUMEXPR_NUM_THREADS",
    }


async def test_limits_come_from_the_job(docker_backend: object) -> None:
    tight = dataclasses.replace(SMALL, wall_s=1.0)
    result = await docker_backend.run(
        sealed_job(program("time.sleep(2)\nreturn 1.0", "import time"), limits=tight)
    )
    assert result.status == "timeout"
    roomy = dataclasses.replace(SMALL, wall_s=10.0)
    result = await docker_backend.run(
        sealed_job(program("time.sleep(2)\nreturn 1.0", "import time"), limits=roomy)
    )
    assert result.status == "ok"


def test_created_containers_carry_the_hardening(docker_backend: object) -> None:
    client = docker_backend.client
    spec = ContainerSpec(
        image=docker_backend.image_tag("python-eval"),
        command=("true",),
        limits=Limits(memory_mb=256, pids=40, cpus=0.5),
        labels={"galapagos": "1", "galapagos.owner": docker_backend.owner},
        env={"PATH": "/usr/bin"},
        name=None,
    )
    container = create_hardened_container(client, spec)
    try:
        host = container.attrs["HostConfig"]
        assert host["NetworkMode"] == "none" and host["ReadonlyRootfs"] is True
        assert host["CapDrop"] == ["ALL"] and sorted(host["CapAdd"]) == ["KILL", "SETGID", "SETUID"]
        assert host["SecurityOpt"] == ["no-new-privileges:true"]
        assert host["Memory"] == host["MemorySwap"] == 256 << 20
        assert host["PidsLimit"] == 40 and host["NanoCpus"] == 500_000_000
        assert host["LogConfig"]["Type"] == "none" and host["Init"] is True
        assert host["Privileged"] is False and not host.get("Binds")
        assert container.attrs["Config"]["StdinOnce"] is True
    finally:
        container.remove(force=True, v=True)


async def test_the_evaluator_can_catch_candidate_errors(docker_backend: object) -> None:
    evaluator = (
        EVALUATOR
        + b"""
from galapagos_sandbox import CandidateTimeout
def tolerant(candidate):
    try:
        candidate.call("solve", timeout=0.5)
    except CandidateTimeout:
        pass
    return {"combined_score": float(candidate.call("fast"))}
"""
    )
    source = "import time\ndef solve():\n    time.sleep(60)\ndef fast():\n    return 0.25\n"
    result = await docker_backend.run(sealed_job(source, function="tolerant", evaluator=evaluator))
    assert result.status == "ok" and result.metrics["combined_score"] == 0.25


async def test_exit_and_quit_behave_as_in_a_normal_interpreter(docker_backend: object) -> None:
    # Containers run Python without ``site``; the runner still provides exit()/quit().
    result = await docker_backend.run(sealed_job(program("exit(3)")))
    assert result.status == "crash" and "exited (status 3)" in result.error


async def test_a_job_cancelled_during_its_cold_start_leaves_no_container(
    docker_backend: object,
) -> None:
    before = set(docker_backend.history)
    job = asyncio.create_task(docker_backend.run(sealed_job(program("return 1.0"))))
    while not set(docker_backend.history) - before:  # the container exists, not yet ready
        await asyncio.sleep(0.005)
    job.cancel()
    with pytest.raises(asyncio.CancelledError):
        await job
    (created,) = set(docker_backend.history) - before
    for _ in range(400):
        if created not in docker_backend._live:
            break
        await asyncio.sleep(0.05)
    assert created not in docker_backend._live  # removed by then, not only at close


async def test_an_evaluator_that_hangs_while_importing_times_out_the_job(
    docker_backend: object,
) -> None:
    job = sealed_job(program("return 1.0"), evaluator=b"while True:\n    pass\n")
    job = dataclasses.replace(job, limits=dataclasses.replace(job.limits, wall_s=1.0))
    result = await docker_backend.run(job)
    assert result.status == "timeout" and "importing the evaluator" in result.error


async def test_a_container_removed_while_starting_is_named_as_such(
    docker_backend: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A container removed under the backend (``sandbox gc --run`` on a live run) before its
    runner said ready is an infrastructure fault: retried on fresh containers, and when every
    one is removed again the error says what happened instead of an empty reason."""
    from harness.core.errors import SandboxError
    from harness.sandbox import docker_backend as module

    def create_then_remove_on_start(client: object, spec: ContainerSpec) -> object:
        container = create_hardened_container(client, spec)
        real_start = container.start

        def start() -> None:
            real_start()
            container.remove(force=True)

        container.start = start
        return container

    monkeypatch.setattr(module, "create_hardened_container", create_then_remove_on_start)
    with pytest.raises(
        SandboxError, match="infrastructure faults in a row.*ended before its runner said ready"
    ):
        await docker_backend.run(sealed_job(program("return 1.0")))


async def test_a_failures_text_does_not_depend_on_the_container_process_history(
    docker_backend: object,
) -> None:
    job = sealed_job(HISTORY_SOURCE, evaluator=HISTORY_EVALUATOR)
    result = await docker_backend.run(job)  # type: ignore[attr-defined]
    assert_feedback_independent_of_process_history(result)
    assert "/tmp/" not in result.artifacts["first"]  # type: ignore[attr-defined]
