"""The box boundary of reused (zygote) containers, attacked (``docs/sandbox.md``, threat model).

Candidates run one after another in the same container, each in its own box: these tests check
that one leaves nothing the next can find (files, ``/dev/shm``, POSIX and SysV IPC, abstract
sockets, loopback ports, processes, threads, environment), that none gets out of its box, that
none can change what the boxes share (interpreter, libraries, runtime, zygote), and that two
candidates running at once cannot see each other.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator

import pytest

from harness.evaluation.driver import TaskEvaluator
from harness.evaluation.task import Task
from tests.redteam.reuse_cases import ESCAPES, FINDER, INTACT, NEIGHBOUR, PLANTER, TAMPER

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def backend() -> Iterator[object]:
    """One zygote container at a time, no creator threads: a job waits for the container the
    previous job ran in to come back, so consecutive candidates share it (until it retires)."""
    from harness.sandbox.docker_backend import DockerBackend
    from harness.sandbox.images import build_images

    build_images(["python-eval"])
    backend = DockerBackend(pool_size=1, pool_creators=0)
    yield backend
    backend.close()


def _stdout(result: object) -> str:
    return result.artifacts.get("stdout_tail", "")  # type: ignore[attr-defined]


async def _in_turn(evaluator: TaskEvaluator, *sources: str) -> list[object]:
    """Evaluate ``sources`` one after another; they must all run in one container."""
    backend = evaluator.backend
    first = len(backend.served_by)  # type: ignore[attr-defined]
    results = [
        await evaluator.evaluate(source, program_id=f"turn{i}", iteration=i)
        for i, source in enumerate(sources)
    ]
    # (A run's first container may serve the start-up canaries first.)
    served = list(backend.served_by)[first:][-len(sources) :]  # type: ignore[attr-defined]
    assert backend.boxes, "the engine refused the boxes: these tests need them"  # type: ignore[attr-defined]
    assert len(served) == len(sources) and len(set(served)) == 1, served
    return results


async def test_a_candidate_leaves_nothing_for_the_next(evaluator: TaskEvaluator) -> None:
    planted, found = await _in_turn(evaluator, PLANTER, FINDER)
    planted_out = _stdout(planted)
    assert planted.status == "ok", planted.error  # type: ignore[attr-defined]
    assert "planted ['/tmp', '.', " in planted_out and "and a daemon" in planted_out, planted_out
    for what in ("/dev/shm", "/dev/mqueue", "sysv shm", "sysv sem", "sysv msg"):
        assert f"'{what}'" in planted_out, planted_out  # every kind really was left behind
    assert "nothing left" in _stdout(found), _stdout(found)


async def test_a_candidate_cannot_leave_its_box(evaluator: TaskEvaluator) -> None:
    if os.uname().machine != "x86_64":
        pytest.skip("the probes use x86_64 system call numbers")
    (probed,) = await _in_turn(evaluator, ESCAPES)
    out = _stdout(probed)
    assert probed.status == "ok", probed.error  # type: ignore[attr-defined]
    assert "ESCAPED" not in out, out
    assert out.count("refused") >= 30, out
    for line in ("CapEff:\t0000000000000000", "CapPrm:\t0000000000000000",
                 "CapBnd:\t0000000000000000", "NoNewPrivs:\t1", "Seccomp:\t2"):  # fmt: skip
        assert line in out, out


async def test_a_candidate_cannot_change_what_boxes_share(
    evaluator: TaskEvaluator, knapsack: Task
) -> None:
    tampered, intact, honest = await _in_turn(
        evaluator, TAMPER, INTACT, knapsack.initial_program or ""
    )
    out = _stdout(tampered)
    assert tampered.status == "ok", tampered.error  # type: ignore[attr-defined]
    assert "WROTE" not in out and "READ" not in out, out
    assert out.count("refused") >= 10, out
    assert intact.status == "ok", (intact.error, _stdout(intact))  # type: ignore[attr-defined]
    assert honest.metrics["combined_score"] == 1.0  # type: ignore[attr-defined]


async def test_candidates_running_at_once_cannot_see_each_other(
    knapsack: Task, sandbox_pair: object
) -> None:
    evaluator = TaskEvaluator(knapsack, sandbox_pair, run_id="neighbours", close_backend=False)
    results = await asyncio.gather(
        *(evaluator.evaluate(NEIGHBOUR, program_id=f"n{i}", iteration=1) for i in range(2))
    )
    for result in results:
        assert "alone" in _stdout(result), _stdout(result)
    served = list(sandbox_pair.served_by)[-2:]  # type: ignore[attr-defined]
    assert len(set(served)) == 2


@pytest.fixture(scope="module")
def sandbox_pair() -> Iterator[object]:
    from harness.sandbox.docker_backend import DockerBackend

    backend = DockerBackend(pool_size=2, pool_creators=2)
    yield backend
    backend.close()
