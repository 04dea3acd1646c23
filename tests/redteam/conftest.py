"""Red-team fixtures: the knapsack task, the Docker backend as runs use it, host-effect checks.

The backend keeps one warm zygote container per task and reuses it (each candidate in a fresh
box): every adversarial candidate runs where earlier candidates ran, and the candidates after it
(the honest program, the leftover finder) run where it ran.

Each adversarial test asserts the recorded failure reason and the absence of a forged score;
these fixtures add what every test needs on top: no container left (``no_leaked_containers``),
no process of a finished container or of a finished box still alive on the host, no marker file
on the host, the orchestrator's environment unchanged, and the backend still able to score an
honest program.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.evaluation.driver import TaskEvaluator
from harness.evaluation.task import Task, load_task
from harness.sandbox.pytest_plugin import leftover_containers

FIXTURE = Path(__file__).parent / "fixtures" / "knapsack"
#: Candidates that try to write outside their container use this name.
MARKER = "GLPG_PWNED"
#: Planted in the orchestrator's environment; no candidate may ever see it.
HONEYPOT = "honeypot-secret-5b1d"


@pytest.fixture(autouse=True)
def _docker_tests_leave_no_containers() -> None:
    """Replaces the per-test leak check of the root conftest here: see ``_no_leaks``."""


@pytest.fixture(scope="module", autouse=True)
def _no_leaks() -> Iterator[None]:
    """No container of this process is left once a module's backends closed (its warm
    containers serve the module's tests one after another, so the check is per module)."""
    import docker

    yield
    client = docker.from_env(timeout=30)
    try:
        left = leftover_containers(client)
        if left:
            from harness.sandbox.ownership import remove_containers

            remove_containers(left)
            pytest.fail(f"the tests left {len(left)} sandbox container(s) behind")
    finally:
        client.close()


@pytest.fixture(scope="session")
def knapsack() -> Task:
    return load_task(FIXTURE)


@pytest.fixture(scope="module")
def backend() -> Iterator[object]:
    from harness.sandbox.docker_backend import DockerBackend
    from harness.sandbox.images import build_images

    build_images(["python-eval"])
    backend = DockerBackend(pool_size=1, pool_creators=1)
    yield backend
    backend.close()


@pytest.fixture
def evaluator(knapsack: Task, backend: object) -> TaskEvaluator:
    return TaskEvaluator(knapsack, backend, run_id="redteam", close_backend=False)


def _processes_of(container_ids: set[str]) -> list[int]:
    """Host pids still inside any of these containers' cgroups."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cgroup") as f:
                cgroups = f.read()
        except OSError:
            continue
        if any(cid in cgroups for cid in container_ids):
            found.append(int(entry))
    return found


def _uid_and_pid_ns(pid: int) -> tuple[str, str] | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            uid = next(line.split()[1] for line in f if line.startswith("Uid:"))
        return uid, os.readlink(f"/proc/{pid}/ns/pid")
    except (OSError, StopIteration):
        return None


def stale_box_processes(container_ids: set[str]) -> list[int]:
    """Candidate processes in live zygote containers that belong to any box but the newest.

    A zygote container holds at most one box at a time (the one prepared for its next job):
    candidate-uid processes in two PID namespaces mean a box outlived its job."""
    by_container: dict[str, dict[str, list[int]]] = {}
    for pid in _processes_of(container_ids):
        seen = _uid_and_pid_ns(pid)
        if seen is None or seen[0] == "0":
            continue
        try:
            with open(f"/proc/{pid}/cgroup") as f:
                cgroups = f.read()
        except OSError:
            continue
        cid = next((c for c in container_ids if c in cgroups), None)
        if cid is None:
            continue
        by_container.setdefault(cid, {}).setdefault(seen[1], []).append(pid)
    stale: list[int] = []
    for boxes in by_container.values():
        if len(boxes) > 1:
            stale += [pid for pids in boxes.values() for pid in pids]
    return stale


def _environ() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}


def _marker_files() -> list[Path]:
    places = [Path("/tmp"), Path.cwd(), Path.home(), Path("/")]
    return [p for place in places for p in place.glob(f"{MARKER}*")]


@pytest.fixture(autouse=True)
def host_unaffected(backend: object, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("OPENAI_API_KEY", f"sk-{HONEYPOT}")
    monkeypatch.setenv("GALAPAGOS_HONEYPOT", HONEYPOT)
    environ = _environ()
    markers = _marker_files()
    first = len(backend.history)
    yield
    assert _environ() == environ, "the orchestrator's environment changed"
    assert _marker_files() == markers, "a candidate wrote a file on the host"
    created = set(list(backend.history)[first:])
    end = time.monotonic() + 15
    while True:
        with backend._lock:
            live = set(backend._live)
        alive = _processes_of(created - live)
        stale = stale_box_processes(live)
        if not (alive or stale) or time.monotonic() > end:
            break
        time.sleep(0.2)
    assert not alive, f"processes of finished containers still run on the host: {alive}"
    assert not stale, f"processes of finished boxes still run on the host: {stale}"
