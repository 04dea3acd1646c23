"""The cascade of an OpenEvolve-format folder (``fixtures/function_minimization``, thresholds
``[0.5, 0.75]`` from its ``config.yaml``) against OpenEvolve 0.4.0's ``_cascade_evaluate``:
the same stages run and the merged numeric metrics are equal.  Ours runs each stage through
the sandbox's job protocol with the local backend (these candidates are our own); the Docker
runs in ``test_docker_runs.py`` exercise the same cascade in containers."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from harness.evaluation.driver import TaskEvaluator
from harness.evaluation.task import load_task
from harness.sandbox.local_backend import LocalBackend

FOLDER = Path(__file__).with_name("fixtures") / "function_minimization"
SEED = (FOLDER / "initial_program.py").read_text()
PROGRAMS = {
    "seed": SEED,  # clears stage 1 (0.94 >= 0.5): both stages run
    "far": SEED.replace("    return search_algorithm()", "    return 4.9, 4.9, 0.0"),  # stops
    "near": SEED.replace("    return search_algorithm()", "    return -1.7, 0.68, 0.0"),
    "minimum": SEED.replace("    return search_algorithm()", "    return -1.70408, 0.67751, 0"),
}
PROBE = "import probes_openevolve\nprint(json.dumps(probes_openevolve.cascade(*DATA)))"


def ours() -> dict[str, Any]:
    task = load_task(FOLDER)
    evaluator = TaskEvaluator(task, LocalBackend())

    async def go() -> dict[str, Any]:
        try:
            return {
                name: await evaluator.evaluate(code, program_id=name, iteration=0)
                for name, code in PROGRAMS.items()
            }
        finally:
            await evaluator.aclose()

    return asyncio.run(go())


def test_folder_thresholds_reach_the_cascade() -> None:
    task = load_task(FOLDER)
    assert [(s.function, s.threshold) for s in task.card.stages] == [
        ("evaluate_stage1", 0.5),
        ("evaluate_stage2", None),
    ]


@pytest.mark.slow
def test_cascade_stages_and_merged_metrics_equal_the_reference(reference) -> None:  # type: ignore[no-untyped-def]
    theirs = reference(PROBE, [str(FOLDER / "evaluator.py"), [0.5, 0.75], list(PROGRAMS.values())])
    mine = ours()
    stopped = set()
    for (name, result), ref in zip(mine.items(), theirs, strict=True):
        assert result.status == "ok", (name, result.error)
        ran = [s["stage"] for s in result.stages]
        # Only stage 2 reports distance_score: the reference ran it exactly when we did.
        assert ("distance_score" in ref["metrics"]) == (
            ran == ["evaluate_stage1", "evaluate_stage2"]
        )
        numeric = {k: float(v) for k, v in ref["metrics"].items() if k != "error"}
        assert dict(result.metrics) == numeric, name
        if len(ran) == 1:
            stopped.add(name)
            assert result.failed_stage == "evaluate_stage1"
    assert stopped == {"far"}
