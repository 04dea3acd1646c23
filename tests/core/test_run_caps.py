"""Evaluations at once: a run's own cap (``evaluator.max_concurrent``) within a shared Runtime's,
and a lone run's default (one per core, at least two).  Local sandbox: the caps are the
Runtime's and the run's handle's, whatever the backend."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from harness.runs import execute, plan_run
from harness.runtime import Runtime
from harness.store.sqlite import SQLiteStore


def _plan(iterations: int, *overrides: str) -> Any:
    return plan_run(
        scaffold="topk", task="function_minimization", iterations=iterations, sandbox="local",
        overrides=["general.max_parallel_iterations=4", *overrides],
    )  # fmt: skip


@pytest.mark.parametrize("own", [None, 1, 2])
async def test_a_runs_own_cap_bounds_its_evaluations_at_once(
    own: int | None, tmp_path: Path
) -> None:
    store = SQLiteStore(tmp_path / "s.sqlite")
    plan = _plan(12, *([f"evaluator.max_concurrent={own}"] if own else []))
    runtime = Runtime(max_containers=4)
    handles: list[Any] = []
    try:
        summary = await execute(
            plan, store, runtime=runtime,
            on_start=lambda run, services: handles.append(services.evaluator.backend),
        )  # fmt: skip
        assert summary.status == "completed"
        assert store.evaluation_count(summary.run_id) == 13
    finally:
        await runtime.aclose()
    (handle,) = handles
    if own is None:
        # Four iterations at once, the offline model answering at once: without a cap of its
        # own the run overlaps its evaluations (so the capped cases below can fail).
        assert handle.own is None and runtime.peak_jobs >= 2
    else:
        assert handle.own.cap == own and 1 <= handle.own.peak <= own
        assert 1 <= runtime.peak_jobs <= own


@pytest.mark.parametrize(("cores", "own", "cap"), [(3, None, 3), (1, None, 2), (3, 7, 7)])
async def test_a_lone_run_runs_one_evaluation_per_core_unless_its_config_says(
    cores: int, own: int | None, cap: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    caps: list[tuple[int | None, int | None]] = []
    real = Runtime.__init__

    def init(self: Runtime, **kwargs: Any) -> None:
        caps.append((kwargs.get("max_containers"), kwargs.get("pool_size")))
        real(self, **kwargs)

    monkeypatch.setattr(Runtime, "__init__", init)
    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    plan = _plan(1, *([f"evaluator.max_concurrent={own}"] if own else []))
    summary = await execute(plan, SQLiteStore(tmp_path / "s.sqlite"))
    assert summary.status == "completed"
    assert caps == [(cap, cap + 1)]  # a warm container more than it runs at once


async def test_a_runs_own_cap_above_the_shared_one_cannot_raise_it(tmp_path: Path) -> None:
    """``evaluator.max_concurrent`` is a client key on the hub: a client asking for more than
    the hub's cap still gets at most the hub's cap (the shared slot is taken as well)."""
    runtime = Runtime(max_containers=1)
    try:
        summary = await execute(
            _plan(8, "evaluator.max_concurrent=64"), SQLiteStore(tmp_path / "s.sqlite"),
            runtime=runtime,
        )  # fmt: skip
        assert summary.status == "completed"
    finally:
        await runtime.aclose()
    assert runtime.peak_jobs == 1
