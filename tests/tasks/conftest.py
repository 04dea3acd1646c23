"""Shared helpers for task tests: load a task's trusted evaluator module, run a program in-process.

Evaluators are loaded straight from their files (they are plain modules shipped to the
sandbox).  Programs run through :class:`galapagos_sandbox.testing.InProcessCandidate`, the
sandbox's own in-process double: same plain-data codec, same errors, no isolation (the programs
here are trusted test inputs).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import harness.sandbox  # noqa: F401  (puts galapagos_sandbox on sys.path)
from harness.evaluation.task import Task, load_task, tasks_root

TASKS_DIR = tasks_root()
FIXTURES = Path(__file__).parent / "fixtures"
SHIPPED = sorted(p.parent.name for p in TASKS_DIR.glob("*/task.yaml"))


def load_evaluator(name: str) -> ModuleType:
    """The trusted evaluator module of shipped task ``name``."""
    task = load_task(name)
    path = task.path / task.card.evaluator
    spec = importlib.util.spec_from_file_location(f"test_task_{name}_evaluator", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_stage(task: Task, evaluator: ModuleType, source: str, function: str) -> dict[str, Any]:
    """Metrics of one evaluator function on ``source``, through the in-process double."""
    from galapagos_sandbox.testing import InProcessCandidate

    return getattr(evaluator, function)(InProcessCandidate(source))


def seed_metrics(name: str) -> dict[str, Any]:
    """The seed program's metrics from the task's last stage."""
    task = load_task(name)
    assert task.initial_program is not None
    return run_stage(
        task, load_evaluator(name), task.initial_program, task.card.stages[-1].function
    )
