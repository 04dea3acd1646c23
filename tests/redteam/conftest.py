"""Red-team fixtures: the knapsack task, a cold Docker backend, and host-effect checks.

Each adversarial test asserts the recorded failure reason and the absence of a forged score;
these fixtures add what every test needs on top: no container left (``no_leaked_containers``),
no process of a finished container still alive on the host, no marker file on the host, the
orchestrator's environment unchanged, and the backend still able to score an honest program.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.evaluation.driver import TaskEvaluator
from harness.evaluation.task import Task, load_task
from harness.sandbox.pytest_plugin import no_leaked_containers  # noqa: F401  (fixture)

FIXTURE = Path(__file__).parent / "fixtures" / "knapsack"
#: Candidates that try to write outside their container use this name.
MARKER = "GLPG_PWNED"
#: Planted in the orchestrator's environment; no candidate may ever see it.
HONEYPOT = "honeypot-secret-5b1d"


@pytest.fixture(autouse=True)
def _no_leaks(no_leaked_containers: None) -> None:  # noqa: F811
    """Autouse wrapper around the shared leak check."""


@pytest.fixture(scope="session")
def knapsack() -> Task:
    return load_task(FIXTURE)


@pytest.fixture(scope="module")
def backend() -> Iterator[object]:
    from harness.sandbox.docker_backend import DockerBackend
    from harness.sandbox.images import build_images

    build_images(["python-eval"])
    backend = DockerBackend(pool_size=0)
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
    while (alive := _processes_of(created)) and time.monotonic() < end:
        time.sleep(0.2)
    assert not alive, f"processes of finished containers still run on the host: {alive}"
