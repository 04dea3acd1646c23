"""``LocalBackend``: the same runner in a local subprocess.  UNSAFE — no isolation.

It exists for machines without Docker and only behind an explicit ``--sandbox local``.  The
candidate runs as *your* user, can read your files, reach the network and, by starting its own
session, outlive the job.  What it does give: a separate process for the candidate, kill of the
whole process group on timeout, rlimits (address space, file size, open files, CPU time), a
minimal environment without API keys, and the same job protocol and result schema as Docker.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from galapagos_sandbox.wire import WireError, read_frame, write_all

from harness.core.records import EvalResult, EvalStatus
from harness.sandbox import _runtime
from harness.sandbox.hardening import minimal_env
from harness.sandbox.jobs import (
    FRAME_SLACK,
    encode_job,
    failure_result,
    result_from_document,
    runner_config,
    warm_python,
)
from harness.sandbox.protocol import Job

__all__ = ["LocalBackend"]

log = logging.getLogger(__name__)

#: Seconds past the job's budget before the host kills the process group.
HOST_GRACE_S = 2.0
STARTUP_S = 60.0


class LocalBackend:
    """UNSAFE backend: runs candidates on this machine with no isolation beyond rlimits."""

    name = "local"

    def __init__(self, *, python: str | None = None, max_parallel: int = 8) -> None:
        log.warning(
            "sandbox 'local' is UNSAFE: candidate programs run on this machine as your user "
            "with no isolation; use it only for trusted code or when Docker is unavailable"
        )
        self.python = python or sys.executable
        self._executor = ThreadPoolExecutor(max_parallel, thread_name_prefix="galapagos-local")
        self._procs: set[subprocess.Popen[bytes]] = set()
        self._lock = threading.Lock()

    async def run(self, job: Job) -> EvalResult:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._run_sync, job)

    async def prewarm(self, job: Job, demand: int | None = None) -> None:
        """Nothing to pre-start locally (kept for interface parity with DockerBackend)."""

    async def aclose(self) -> None:
        with self._lock:
            procs = list(self._procs)
        for proc in procs:
            _kill_group(proc)
        self._executor.shutdown(wait=True)

    def _run_sync(self, job: Job) -> EvalResult:
        started = time.monotonic()
        scratch = tempfile.mkdtemp(prefix="galapagos-local-")
        trusted, work = os.path.join(scratch, "trusted"), os.path.join(scratch, "work")
        os.mkdir(trusted, 0o700)
        os.mkdir(work, 0o700)
        limits = job.limits
        cfg = runner_config(
            limits,
            job.preload,
            workdir=work,
            trusted_dir=trusted,
            container=False,
            compat_path=str(_runtime.COMPAT_DIR),
            python=self.python,
            memory_mb=limits.memory_mb,
            warm_python=warm_python(job),
        )
        env = minimal_env(pythonpath=str(_runtime.RUNTIME_DIR), home=work)
        proc = subprocess.Popen(  # noqa: S603 - our own runner, fixed argv
            [self.python, "-P", "-s", "-m", "galapagos_sandbox.runner", cfg.to_json()],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=trusted,
            env=env,
            start_new_session=True,
        )
        with self._lock:
            self._procs.add(proc)
        stderr = bytearray()
        drain = threading.Thread(target=_drain_tail, args=(proc.stderr, stderr), daemon=True)
        drain.start()
        try:
            return self._exchange(job, proc, started, stderr)
        finally:
            _kill_group(proc)
            drain.join(timeout=2.0)
            with self._lock:
                self._procs.discard(proc)
            shutil.rmtree(scratch, ignore_errors=True)

    def _exchange(
        self, job: Job, proc: subprocess.Popen[bytes], started: float, stderr: bytearray
    ) -> EvalResult:
        assert proc.stdin is not None and proc.stdout is not None
        out = proc.stdout.fileno()
        cap = job.limits.output_bytes + FRAME_SLACK
        elapsed = lambda: time.monotonic() - started  # noqa: E731
        try:
            ready = read_frame(out, max_frame=cap, deadline=time.monotonic() + STARTUP_S)
            if ready is None or ready[0].get("kind") != "ready":
                return self._died(proc, stderr, elapsed(), "the runner did not start")
            write_all(proc.stdin.fileno(), encode_job(job))
            deadline = time.monotonic() + job.limits.wall_s + HOST_GRACE_S
            frame = read_frame(out, max_frame=cap, deadline=deadline)
        except TimeoutError:
            return failure_result(
                "timeout",
                f"the evaluation exceeded its {job.limits.wall_s:g} s budget",
                duration_s=elapsed(),
                stderr_tail=_tail(stderr),
            )
        except WireError as exc:
            status: EvalStatus = "output_limit" if "cap" in str(exc) else "invalid_result"
            return failure_result(
                status, f"unreadable result: {exc}", duration_s=elapsed(), stderr_tail=_tail(stderr)
            )
        except BrokenPipeError:
            frame = None
        if frame is None:
            return self._died(proc, stderr, elapsed(), "the runner exited without a result")
        return result_from_document(frame[0], duration_s=elapsed())

    def _died(
        self, proc: subprocess.Popen[bytes], stderr: bytearray, duration: float, what: str
    ) -> EvalResult:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=2.0)
        return failure_result(
            "crash", what, duration_s=duration, exit_code=proc.returncode, stderr_tail=_tail(stderr)
        )


def _drain_tail(stream: object, sink: bytearray, keep: int = 16 * 1024) -> None:
    read = stream.read1 if hasattr(stream, "read1") else stream.read  # type: ignore[attr-defined]
    with contextlib.suppress(OSError, ValueError):
        while chunk := read(65536):
            sink += chunk
            del sink[:-keep]


def _tail(buf: bytearray) -> str:
    return bytes(buf).decode("utf-8", "replace")


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5.0)
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
