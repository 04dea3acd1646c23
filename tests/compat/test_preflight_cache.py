"""The preflight probe is remembered per image content: a folder whose needs an image was found
to have is not probed again (no probe container); a missing piece is never remembered, and an
image with other content (another id) is probed again.  A fake backend records the jobs sent;
the Docker path is ``tests/compat/test_preflight.py``."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from harness.core.errors import RunFailed
from harness.core.records import EvalResult
from harness.evaluation.driver import TaskEvaluator
from harness.evaluation.preflight import PROBE_MODULE
from harness.evaluation.task import load_task
from harness.sandbox.protocol import Job
from tests.compat.test_preflight import LOADER, SEED, folder

EVALUATOR = (
    LOADER
    + """
import numpy


def evaluate(program_path):
    return {"combined_score": float(_load(program_path).value())}
"""
)


class Recording:
    """A backend that answers probes with ``missing`` and scores every program 0.25."""

    name = "fake"

    def __init__(self, image_id: str, missing: str = "") -> None:
        self.id, self.missing, self.probes, self.jobs = image_id, missing, 0, 0

    def image_id(self, name: str) -> str:
        return self.id

    async def run(self, job: Job) -> EvalResult:
        if job.evaluator_module == PROBE_MODULE:
            self.probes += 1
            return EvalResult(status="ok", metrics={"ok": 1.0}, artifacts={"modules": self.missing})
        self.jobs += 1
        return EvalResult(status="ok", metrics={"combined_score": 0.25})

    async def aclose(self) -> None:
        pass


def seed_once(task_path: Path, backend: Recording) -> EvalResult:
    evaluator = TaskEvaluator(load_task(task_path), backend)  # type: ignore[arg-type]
    return asyncio.run(evaluator.evaluate(SEED, program_id="seed", iteration=0))


def test_a_complete_image_is_probed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GALAPAGOS_CACHE_DIR", str(tmp_path / "cache"))
    task = folder(tmp_path, EVALUATOR)
    first = Recording("sha256:one")
    assert seed_once(task, first).status == "ok" and first.probes == 1
    again = Recording("sha256:one")
    assert seed_once(task, again).status == "ok"
    assert again.probes == 0 and again.jobs == 1
    other = Recording("sha256:two")  # the image was rebuilt with other content
    seed_once(task, other)
    assert other.probes == 1


def test_a_missing_package_is_never_remembered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GALAPAGOS_CACHE_DIR", str(tmp_path / "cache"))
    task = folder(tmp_path, EVALUATOR)
    for _ in range(2):
        lacking = Recording("sha256:one", missing="numpy")
        with pytest.raises(RunFailed, match="numpy"):
            seed_once(task, lacking)
        assert lacking.probes == 1
