"""The runner's sealed-task install (what warm containers do before ``ready``) and the
first call that travels with the program, exercised on a local runner process."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from galapagos_sandbox.wire import read_frame, write_all

from harness.sandbox import _runtime
from harness.sandbox.hardening import minimal_env
from harness.sandbox.jobs import encode_job, encode_task, runner_config, task_digest
from harness.sandbox.local_backend import LocalBackend
from tests.sandbox.helpers import (
    HISTORY_EVALUATOR,
    HISTORY_SOURCE,
    SMALL,
    assert_feedback_independent_of_process_history,
    program,
    sealed_job,
)

MARKED_EVALUATOR = """
import os
with open(os.environ["MARKER"], "w") as f:
    f.write("imported")

def evaluate(candidate):
    return {"combined_score": float(candidate.call("solve")), "flavour": os.environ["FLAVOUR"]}
"""


class Runner:
    """A runner subprocess configured to expect a task frame before ``ready``."""

    def __init__(self, tmp: Path) -> None:
        trusted, work = tmp / "trusted", tmp / "work"
        trusted.mkdir(mode=0o700)
        work.mkdir(mode=0o700)
        cfg = runner_config(
            SMALL,
            (),
            workdir=str(work),
            trusted_dir=str(trusted),
            compat_path=str(_runtime.COMPAT_DIR),
            python=sys.executable,
            task=True,
        )
        self.proc = subprocess.Popen(  # noqa: S603 - our own runner
            [sys.executable, "-P", "-s", "-m", "galapagos_sandbox.runner", cfg.to_json()],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=minimal_env(pythonpath=str(_runtime.RUNTIME_DIR), home=str(work)),
        )

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        write_all(self.proc.stdin.fileno(), data)

    def frame(self) -> dict:
        assert self.proc.stdout is not None
        out = self.proc.stdout.fileno()
        got = read_frame(out, max_frame=1 << 20, deadline=time.monotonic() + 30)
        assert got is not None, self.proc.stderr.read().decode() if self.proc.stderr else ""
        return got[0]

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def runner(tmp_path: Path) -> Iterator[Runner]:
    r = Runner(tmp_path)
    yield r
    r.close()


def _marked_job(tmp_path: Path):
    job = sealed_job(program("return 0.25"), evaluator=MARKED_EVALUATOR.encode())
    marker = tmp_path / "imported"
    return dataclasses.replace(job, env={"MARKER": str(marker), "FLAVOUR": "x"}), marker


def test_the_task_is_installed_before_ready_and_the_job_carries_only_the_candidate(
    runner: Runner, tmp_path: Path
) -> None:
    job, marker = _marked_job(tmp_path)
    digest = task_digest(job)
    runner.send(encode_task(job, digest))
    assert runner.frame()["kind"] == "ready"
    assert marker.read_text() == "imported"  # the evaluator was imported before any job
    runner.send(encode_job(job, installed=digest))
    result = runner.frame()
    assert result["status"] == "ok", result
    assert result["metrics"] == {"combined_score": 0.25}
    assert result["artifacts"]["flavour"] == "x"  # the job's environment reached the import


def test_a_job_for_another_task_is_refused(runner: Runner, tmp_path: Path) -> None:
    job, _ = _marked_job(tmp_path)
    runner.send(encode_task(job, task_digest(job)))
    assert runner.frame()["kind"] == "ready"
    runner.send(encode_job(job, installed="0" * 64))
    result = runner.frame()
    assert result["status"] == "error" and "another task" in result["error"]


@pytest.mark.parametrize(
    ("source", "status", "words"),
    [
        pytest.param("raise ValueError('no data')\n", "crash", "ValueError: no data", id="raises"),
        pytest.param(  # waits out the import's time limit
            "while True:\n    pass\n",
            "timeout",
            "importing the evaluator",
            id="hangs",
            marks=pytest.mark.slow,
        ),
    ],
)
def test_an_evaluator_that_fails_to_import_fails_the_job_not_the_runner(
    runner: Runner, source: str, status: str, words: str
) -> None:
    job = sealed_job(program("return 1.0"), evaluator=source.encode())
    job = dataclasses.replace(job, limits=dataclasses.replace(job.limits, wall_s=0.5))
    digest = task_digest(job)
    runner.send(encode_task(job, digest))
    assert runner.frame()["kind"] == "ready"
    runner.send(encode_job(job, installed=digest))
    result = runner.frame()
    assert result["status"] == status and words in result["error"], json.dumps(result)


RETRYING_EVALUATOR = b"""
from galapagos_sandbox import CandidateError

def evaluate(candidate):
    errors = []
    for _ in range(2):
        try:
            candidate.call("solve")
        except CandidateError as exc:
            errors.append(str(exc))
    return {"combined_score": 0.0, "first": errors[0], "second": errors[1]}
"""


async def test_a_call_after_a_failed_load_gets_the_same_error_at_once() -> None:
    backend = LocalBackend()
    try:
        job = sealed_job("raise ValueError('broken at import')\n", evaluator=RETRYING_EVALUATOR)
        result = await backend.run(job)
    finally:
        await backend.aclose()
    assert result.status == "ok", result.error
    first, second = result.artifacts["first"], result.artifacts["second"]
    assert first == second and "loading raised ValueError: broken at import" in first


RESPAWN_EVALUATOR = b"""
from galapagos_sandbox import CandidateError

def evaluate(candidate):
    try:
        candidate.call("leave")  # the candidate process exits: the next call gets a fresh one
    except CandidateError:
        pass
    return {"combined_score": 0.0, "seen": candidate.call("peek")}
"""


async def test_a_respawned_candidate_gets_none_of_the_task_environment() -> None:
    source = (
        "import os\ndef leave():\n    os._exit(3)\n"
        "def peek():\n    return os.environ.get('HINT', '-')\n"
    )
    job = dataclasses.replace(
        sealed_job(source, evaluator=RESPAWN_EVALUATOR), env={"HINT": "for the evaluator only"}
    )
    backend = LocalBackend()
    try:
        result = await backend.run(job)
    finally:
        await backend.aclose()
    assert result.status == "ok", result.error
    assert result.artifacts["seen"] == "-"


async def test_a_failures_text_does_not_depend_on_the_candidate_process_history() -> None:
    backend = LocalBackend()
    try:
        result = await backend.run(sealed_job(HISTORY_SOURCE, evaluator=HISTORY_EVALUATOR))
    finally:
        await backend.aclose()
    assert_feedback_independent_of_process_history(result)
    assert "galapagos-local-" not in result.artifacts["first"]  # nor of the job's directory


ANNOTATIONS_EVALUATOR = b"""
class E:
    x: int

def evaluate(candidate):
    return {
        "combined_score": 0.0,
        "seen": candidate.call("annotation"),
        "evaluator": repr(E.__annotations__["x"]),
    }
"""


async def test_a_program_is_compiled_without_the_runtimes_future_flags() -> None:
    """The runtime's modules use ``from __future__ import annotations``; a program or an
    evaluator compiled by them must not inherit it (``python3 program.py``, as the peers import
    them, does not)."""
    source = "class C:\n    x: int\ndef annotation():\n    return repr(C.__annotations__['x'])\n"
    backend = LocalBackend()
    try:
        result = await backend.run(sealed_job(source, evaluator=ANNOTATIONS_EVALUATOR))
    finally:
        await backend.aclose()
    assert result.status == "ok", result.error
    assert result.artifacts["seen"] == "<class 'int'>"
    assert result.artifacts["evaluator"] == "<class 'int'>"
