"""The start-up canaries as the first jobs of a run's own first container (issue 27).

- A run whose image the canaries run in starts one container before its first candidate: the
  canaries run in fresh boxes of the run's first zygote container, then its first candidate
  runs in a fresh box of that same container; no container of their own.
- A canary that gets through there still stops the run before any candidate (fail closed), with
  the same one-line error, and leaves no container behind.
- Another image (a toolchain image) keeps the canaries' own container.
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import docker
import pytest

from harness.core.errors import SandboxError
from harness.runs import execute, plan_run
from harness.runtime import Runtime
from harness.sandbox import doctor, ownership
from harness.sandbox.docker_backend import DockerBackend
from harness.store.sqlite import SQLiteStore

pytestmark = pytest.mark.docker


def _count_own_containers(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Calls of the canaries' own container path (still run for real when called)."""
    calls: list[int] = []
    real = doctor._canaries

    async def counted(*args: Any, **kwargs: Any) -> list[doctor.Check]:
        calls.append(1)
        return await real(*args, **kwargs)

    monkeypatch.setattr(doctor, "_canaries", counted)
    return calls


@pytest.mark.parametrize("task", ["function_minimization", "circle_packing"])
async def test_a_run_starts_one_container_before_its_first_candidate(
    task: str, sandbox_images: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    own = _count_own_containers(monkeypatch)
    store = SQLiteStore(tmp_path / "s.sqlite")
    runtime = Runtime()
    try:
        summary = await execute(plan_run(scaffold="best_of_n", task=task, iterations=0), store)
        assert summary.status == "completed"
        summary = await execute(
            plan_run(scaffold="best_of_n", task=task, iterations=0), store, runtime=runtime
        )
        assert summary.status == "completed"
        assert store.evaluation_count(summary.run_id) >= 1
        assert runtime.canary_runs == 1 and runtime.canaries_in_first_container == 1
        assert own == []  # no container of their own, here nor in the run before
        (backend,) = runtime.backends
        assert isinstance(backend, DockerBackend)
        # The seed ran in the first container the run created: the one the canaries ran in.
        assert backend.served_by[0] == backend.history[0]
    finally:
        await runtime.aclose()


async def test_a_canary_that_gets_through_in_the_first_container_stops_the_run(
    sandbox_images: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    source, statuses, what, _ = doctor.CANARIES["forgery"]
    monkeypatch.setitem(doctor.CANARIES, "forgery", (source, statuses, what, lambda r: False))
    own = _count_own_containers(monkeypatch)
    store = SQLiteStore(tmp_path / "s.sqlite")
    runtime = Runtime()
    plan = plan_run(scaffold="best_of_n", task="function_minimization", iterations=2)
    try:
        with pytest.raises(SandboxError) as failed:
            await execute(plan, store, runtime=runtime)
        message = str(failed.value)
        assert "\n" not in message
        assert message.startswith("sandbox self-test failed, refusing to run untrusted code")
        assert "canary:forgery" in message and "galapagos sandbox doctor" in message
        assert runtime.canaries_in_first_container == 1 and own == []
        (backend,) = runtime.backends
        assert isinstance(backend, DockerBackend)
        assert list(backend.served_by) == []  # no candidate ran
        assert store.list_runs() == []  # nothing stored
        instance = backend.instance
    finally:
        await runtime.aclose()
    client = docker.from_env()
    left = client.containers.list(
        all=True, filters={"label": f"{ownership.BACKEND_LABEL}={instance}"}
    )
    assert left == []


async def test_another_image_keeps_the_canaries_own_container(
    sandbox_images: dict[str, str],
) -> None:
    from harness.core.config import EvaluatorConfig

    runtime = Runtime()
    try:
        backend = await runtime.backend(EvaluatorConfig(), "r", wait_for_canaries=False)
        runtime.canaries_in_pool(backend, "rust-eval")
        assert runtime.canaries_in_first_container == 0
        # The run's prewarm is for another image than the one armed: they run elsewhere.
        inner = backend.inner
        assert isinstance(inner, DockerBackend)
        results = inner.canaries_first("rust-eval", doctor.startup_jobs())
        job = doctor.canary_job(("honest",))  # python-eval
        await inner.prewarm(job)
        assert await asyncio.wrap_future(results) is None
        await backend.ready()  # the gate runs them in a container of their own, and passes
        assert runtime.canary_runs == 1
    finally:
        await runtime.aclose()


def test_the_images_the_canaries_run_in() -> None:
    assert doctor.canaries_run_in("python-eval")
    assert doctor.canaries_run_in("python-eval+matplotlib+sympy")  # pip packages only
    assert not doctor.canaries_run_in("python-eval@/tasks/x")  # a folder's Dockerfile
    assert not doctor.canaries_run_in("python-eval+sympy@/tasks/x")
    assert not doctor.canaries_run_in("r-eval") and not doctor.canaries_run_in("rust-eval")


async def test_a_container_that_breaks_during_the_canaries_stops_the_run(
    sandbox_images: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A canary job whose box never answers (here its evaluator ends the runner) fails them
    all: the run stops with the same one-line error, no candidate ran, nothing is left."""
    broken = doctor.canary_job(("honest",))
    broken = dataclasses.replace(
        broken, files={"evaluator.py": b"import os\ndef evaluate(candidate):\n    os._exit(3)\n"}
    )
    monkeypatch.setattr(doctor, "startup_jobs", lambda limits=None: [broken])
    own = _count_own_containers(monkeypatch)
    store = SQLiteStore(tmp_path / "s.sqlite")
    runtime = Runtime()
    plan = plan_run(scaffold="best_of_n", task="function_minimization", iterations=1)
    try:
        with pytest.raises(SandboxError) as failed:
            await execute(plan, store, runtime=runtime)
        message = str(failed.value)
        assert "\n" not in message and message.startswith("sandbox self-test failed")
        assert "canary:startup: start-up jobs in the run's first container" in message
        assert "galapagos sandbox doctor" in message
        assert own == []
        (backend,) = runtime.backends
        assert isinstance(backend, DockerBackend) and list(backend.served_by) == []
        assert store.list_runs() == []
        instance = backend.instance
    finally:
        await runtime.aclose()
    left = docker.from_env().containers.list(
        all=True, filters={"label": f"{ownership.BACKEND_LABEL}={instance}"}
    )
    assert left == []


async def test_the_run_asks_for_its_container_before_it_sets_up_the_llm_client(
    sandbox_images: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The engine starts the run's first container (and the canaries in it) while the client
    is set up, not after: when the client's set-up begins, the pool was already asked for the
    run's key, and the set-up does not wait for the canaries (whose verdict still gates the
    seed: fail closed)."""
    import harness.llm.client
    from harness.sandbox.pool import WarmPool

    seen: list[str] = []
    real_want, real_client = WarmPool.want, harness.llm.client.LLMClient
    runtime = Runtime()

    def want(self: WarmPool[Any], key: Any, demand: int | None = None) -> None:
        seen.append("container asked for")
        real_want(self, key, demand)

    def client(*args: Any, **kwargs: Any) -> Any:
        seen.append("client made" + (" after the canaries" if runtime._canaries_passed else ""))
        return real_client(*args, **kwargs)

    monkeypatch.setattr(WarmPool, "want", want)
    # (``Runtime.llm`` imports the client when it makes the first one)
    monkeypatch.setattr(harness.llm.client, "LLMClient", client)
    store = SQLiteStore(tmp_path / "s.sqlite")
    try:
        plan = plan_run(scaffold="best_of_n", task="function_minimization", iterations=1)
        summary = await execute(plan, store, runtime=runtime)
        assert summary.status == "completed"
        assert seen[:2] == ["container asked for", "client made"]
        assert runtime.canary_runs == 1
    finally:
        await runtime.aclose()


async def test_a_run_that_gives_up_on_its_canaries_leaves_its_first_container_serving(
    sandbox_images: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that stops while the canaries run in its first container (its LLM endpoint
    refused, Ctrl-C) cancels the future it awaited.  The container finishes them and serves
    on, and no thread of the pool dies on the cancelled future (it did: `InvalidStateError`
    in the pool's thread, a traceback on the command's stderr under its one-line error)."""
    import threading

    from harness.core.config import EvaluatorConfig

    died: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: died.append(args.exc_value))
    runtime = Runtime()
    try:
        # One warm container: the job waits for the one that runs the canaries first.
        ev = EvaluatorConfig(pool_size=1)
        backend = await runtime.backend(ev, "r", wait_for_canaries=False)
        inner = backend.inner
        assert isinstance(inner, DockerBackend)
        results = inner.canaries_first("python-eval", doctor.startup_jobs())
        assert results.cancel()  # the waiter gave up before the container took them
        job = doctor.canary_job(("honest",))  # python-eval, as armed
        await inner.prewarm(job)
        result = await asyncio.wait_for(inner.run(job), timeout=120)
        assert result.status == "ok", result
        # Served by the container that ran the canaries (not discarded for a new one).
        assert inner.served_by[0] == inner.history[0]
        assert died == []
    finally:
        await runtime.aclose()


@pytest.mark.parametrize(
    ("scaffold", "own", "demand"), [("topk", None, 3), ("topk", 2, 2), ("adaevolve", None, None)]
)
async def test_a_parallel_run_asks_its_pool_for_a_container_per_iteration_in_flight(
    scaffold: str,
    own: int | None,
    demand: int | None,
    sandbox_images: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """Containers for every parallel iteration start before its first wave (the Runtime's
    shared backend once lost this), as many as the run's own cap lets run at once; a scaffold
    that runs one iteration at a time asks for none beyond its own."""
    from harness.sandbox.pool import WarmPool

    asked: list[tuple[str | None, int | None]] = []
    real = WarmPool.want

    def want(self: WarmPool[Any], key: Any, demand: int | None = None) -> None:
        asked.append((key.run, demand))
        real(self, key, demand)

    monkeypatch.setattr(WarmPool, "want", want)
    store = SQLiteStore(tmp_path / "s.sqlite")
    runtime = Runtime()
    plan = plan_run(
        scaffold=scaffold, task="function_minimization", iterations=0,
        overrides=[
            "general.max_parallel_iterations=3",
            *([f"evaluator.max_concurrent={own}"] if own else []),
        ],
    )  # fmt: skip
    try:
        summary = await execute(plan, store, runtime=runtime)
        assert summary.status == "completed"
    finally:
        await runtime.aclose()
    mine = [d for run, d in asked if run == summary.run_id]
    assert mine, asked
    assert max((d or 1) for d in mine) == (demand or 1)
    if demand is not None:
        assert demand in mine
