"""``TaskEvaluator``: runs a task's cascade, one sandbox job (one fresh container) per stage.

Cascade semantics follow OpenEvolve (``reference/openevolve_shinka.md`` §A.3):

- stages run in card order; after each stage its score (``combined_score``, else the mean of
  the numeric non-``error`` metrics) is compared with the stage's threshold, and a score below
  it stops the cascade: the program is still a valid, low-scoring result (status ``ok``),
  ``failed_stage`` names the stage that stopped it and its stage summary says why (no artifact:
  the references show a prompt nothing about a threshold stop);
- metrics of the stages that ran are merged, later stages winning; bools become 1.0/0.0 (except
  ``timeout``, which the failure predicate reads as a bool); strings leave the metrics and go to
  the artifacts (``error`` included, so the failure predicate still sees it);
- a stage that ends non-ok (timeout, crash, oom, output_limit, invalid_result, error) or that
  the evaluator judged invalid makes the whole result a failure (``validity 0``,
  ``combined_score 0.0``, ``timeout: True`` on timeouts) with the reason in the artifacts.

Each stage summary lands in ``EvalResult.stages``.  Jobs carry the run id, program id, iteration
and stage as container labels, so containers can be reaped per run.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.core.errors import RunFailed, SandboxUnavailable
from harness.core.evaluator import BaseEvaluator
from harness.core.records import EvalResult
from harness.core.scoring import is_failure
from harness.evaluation.preflight import (
    Needs,
    known_complete,
    missing_message,
    needs_of,
    probe_job,
    probe_key,
    read_probe,
    remember_complete,
)
from harness.evaluation.task import CascadeStage, Task
from harness.sandbox.protocol import Job, Limits, SandboxBackend

__all__ = ["TaskEvaluator", "stage_score"]


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def stage_score(metrics: Mapping[str, Any]) -> float:
    """The gate score: ``combined_score``, else the mean of numeric non-``error`` metrics."""
    if _number(metrics.get("combined_score")):
        return float(metrics["combined_score"])
    values = [float(v) for k, v in metrics.items() if k != "error" and _number(v)]
    return sum(values) / len(values) if values else 0.0


def _merge(into: dict[str, Any], artifacts: dict[str, str], metrics: Mapping[str, Any]) -> None:
    for key, value in metrics.items():
        if isinstance(value, bool):
            into[key] = value if key == "timeout" else float(value)
        elif _number(value):
            if key != "error":
                into[key] = value
        elif isinstance(value, str) and value:
            artifacts[key] = value


class TaskEvaluator(BaseEvaluator):
    """Scores programs for one task through a sandbox backend."""

    def __init__(
        self,
        task: Task,
        backend: SandboxBackend,
        *,
        run_id: str | None = None,
        limits: Limits | None = None,
        close_backend: bool = True,
        warm_python: bool = True,
    ) -> None:
        self.task = task
        self.warm_python = warm_python
        self.backend = backend
        self.run_id = run_id
        self.limits = limits or task.card.limits.to_limits()
        self.close_backend = close_backend
        suffix = task.card.file_suffix or Path(task.card.initial_program).suffix or ".py"
        self.candidate_filename = f"program{suffix}"
        self._prewarmed = False
        self._checked = False

    def job(self, stage: CascadeStage, code: str, labels: Mapping[str, str] | None = None) -> Job:
        card = self.task.card
        all_labels = dict(labels or {})
        if self.run_id:
            all_labels["galapagos.run"] = self.run_id
        return Job(
            mode=card.mode,
            function=stage.function,
            candidate=code,
            files=self.task.files,
            evaluator_module=self.task.evaluator_module,
            candidate_filename=self.candidate_filename,
            limits=self.limits,
            image=card.image,
            preload=tuple(card.preload),
            labels=all_labels,
            warm_python=self.warm_python,
        )

    async def prewarm(self, demand: int | None = None) -> None:
        """Ask the backend to pre-start containers for this task (no-op if it cannot);
        ``demand``: evaluations that will run at once (the run's parallel iterations), so that
        containers for all of them start before the first."""
        self._prewarmed = True
        prewarm = getattr(self.backend, "prewarm", None)
        if prewarm is not None:
            job = self.job(self.task.card.stages[0], "")
            await (prewarm(job) if demand is None else prewarm(job, demand))

    async def preflight(self) -> None:
        """A compat folder's needs (Python packages, commands) looked up in its image before
        its first evaluation; anything missing stops the run (:mod:`.preflight`)."""
        self._checked = True
        task, card = self.task, self.task.card
        if card.mode != "compat":
            return
        evaluator = task.path / card.evaluator
        if not evaluator.is_file():  # SkyDiscover's containerised format: the bridge runs it
            evaluator = task.path / "evaluator" / "evaluator.py"
        seed = task.path / card.initial_program
        needs = needs_of(task.path, evaluator, seed if seed.is_file() else None, card.language)
        if not needs:
            return
        key = await self._probe_key(card.image, needs)
        if key is not None and known_complete(key):
            return  # this image's content had all of them when last asked: no probe container
        labels = {"galapagos.stage": "preflight"}
        if self.run_id:
            labels["galapagos.run"] = self.run_id
        try:
            result = await self.backend.run(probe_job(needs, card.image, labels))
        except SandboxUnavailable as exc:  # an on-demand (toolchain) image not built yet
            if "built on demand" not in str(exc):
                raise
            raise RunFailed(f"task {task.name}: {exc}; no LLM call was made") from exc
        found = {**result.metrics, **result.artifacts}
        if result.status != "ok" or found.get("ok") != 1.0:
            return  # the probe could not run; the evaluations will say why
        modules, commands = read_probe(found, found)
        if modules or commands:
            raise RunFailed(
                missing_message(task.name, card.image, needs, modules, commands, card.language)
            )
        if key is not None:
            remember_complete(key)

    async def _probe_key(self, image: str, needs: Needs) -> str | None:
        """The cache key of the probe (:func:`~harness.evaluation.preflight.probe_key`), when
        the backend can name its image's content (Docker); else None: always probe."""
        find = getattr(self.backend, "image_id", None)
        if find is None:
            return None
        try:
            image_id = await asyncio.to_thread(find, image)
        except Exception:  # the probe itself will say what is wrong with the image
            return None
        return probe_key(image_id, needs) if image_id else None

    async def evaluate(self, code: str, *, program_id: str, iteration: int) -> EvalResult:
        if not self._prewarmed:
            await self.prewarm()
        if self._checked:
            return await self._evaluate_once(code, program_id, iteration)
        # The first evaluation (the seed's) runs alongside the preflight probe (its own
        # container), and returns only after it: a missing need stops the run and the
        # evaluation is dropped, never recorded (as when the probe ran first).
        self._checked = True
        probe = asyncio.ensure_future(self.preflight())
        try:
            result = await self._evaluate_once(code, program_id, iteration)
        except BaseException as exc:
            if not isinstance(exc, Exception):  # cancelled: so is the probe
                probe.cancel()
            (checked,) = await asyncio.gather(probe, return_exceptions=True)
            if isinstance(checked, RunFailed):  # a missing package explains the failure
                raise checked from None
            raise
        await probe
        return result

    async def _evaluate_once(self, code: str, program_id: str, iteration: int) -> EvalResult:
        merged: dict[str, Any] = {}
        artifacts: dict[str, str] = {}
        summaries: list[dict[str, Any]] = []
        faults: list[str] = []
        result = await self._evaluate(
            code, program_id, iteration, merged, artifacts, summaries, faults
        )
        if faults:
            return dataclasses.replace(result, infra_retries=tuple(faults))
        return result

    async def _evaluate(
        self,
        code: str,
        program_id: str,
        iteration: int,
        merged: dict[str, Any],
        artifacts: dict[str, str],
        summaries: list[dict[str, Any]],
        faults: list[str],
    ) -> EvalResult:
        total = 0.0
        stages = self.task.card.stages
        for stage in stages:
            labels = {
                "galapagos.program": program_id,
                "galapagos.iteration": str(iteration),
                "galapagos.stage": stage.function,
            }
            result = await self.backend.run(self.job(stage, code, labels))
            faults.extend(result.infra_retries)
            total += result.duration_s
            summary: dict[str, Any] = {
                "stage": stage.function,
                "status": result.status,
                "duration_s": result.duration_s,
            }
            if result.status != "ok" or is_failure(result.metrics, result.artifacts):
                summaries.append({**summary, "passed": False})
                return self._failed(stage, result, merged, artifacts, summaries, total)
            _merge(merged, artifacts, result.metrics)
            artifacts.update(result.artifacts)
            score = stage_score(result.metrics)
            passed = stage.threshold is None or score >= stage.threshold
            summaries.append({**summary, "score": score, "passed": passed})
            if not passed and stage is not stages[-1]:
                # Not a failure, and (as in both references) nothing the prompt would show: the
                # stage summary records the stop.
                summaries[-1]["stopped"] = (
                    f"{stage.function} scored {score:.6g}, below its threshold "
                    f"{stage.threshold:.6g}; later stages did not run"
                )
                return EvalResult(
                    status="ok",
                    metrics=merged,
                    artifacts=artifacts,
                    duration_s=total,
                    failed_stage=stage.function,
                    stages=tuple(summaries),
                )
        return EvalResult(
            status="ok",
            metrics=merged,
            artifacts=artifacts,
            duration_s=total,
            stderr_tail=result.stderr_tail,
            stages=tuple(summaries),
        )

    @staticmethod
    def _failed(
        stage: CascadeStage,
        result: EvalResult,
        merged: dict[str, Any],
        artifacts: dict[str, str],
        summaries: list[dict[str, Any]],
        total: float,
    ) -> EvalResult:
        metrics = dict(merged)
        _merge(metrics, artifacts, result.metrics)
        artifacts = {**artifacts, **result.artifacts, "failure_stage": stage.function}
        # Whatever earlier stages said, a failed stage makes the whole result a failure; an
        # "ok" result the evaluator itself marked failed (score 0 with an error) is "invalid".
        metrics.update(validity=0.0, combined_score=0.0)
        status = "invalid" if result.status == "ok" else result.status
        if result.timed_out or result.status == "timeout":
            metrics["timeout"] = True
        if not artifacts.get("error"):
            artifacts["error"] = result.error or result.status
        return dataclasses.replace(
            result,
            status=status,
            metrics=metrics,
            artifacts=artifacts,
            duration_s=total,
            failed_stage=stage.function,
            stages=tuple(summaries),
        )

    async def aclose(self) -> None:
        if self.close_backend:
            await self.backend.aclose()
