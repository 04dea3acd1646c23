"""Adversarial candidates against the real Docker sandbox (cases in :mod:`tests.redteam.cases`).

Each test asserts the recorded status, that no score was forged, what the candidate's probes
printed, and (fixtures) that the host is unaffected, the orchestrator still scores an honest
program, and no container is left.
"""

from __future__ import annotations

import pytest

from harness.core.scoring import is_failure
from harness.evaluation.driver import TaskEvaluator
from harness.evaluation.task import Task
from tests.redteam.cases import CASES, Case
from tests.redteam.reuse_cases import FINDER

pytestmark = pytest.mark.docker


def test_the_corpus_covers_every_family() -> None:
    families = {c.family for c in CASES}
    assert families == {"resource", "isolation", "forgery", "robustness"}
    assert len(CASES) >= 30 and len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
async def test_adversarial_candidate_is_contained(
    case: Case, evaluator: TaskEvaluator, knapsack: Task
) -> None:
    result = await evaluator.evaluate(case.source, program_id=case.name, iteration=1)
    stdout = result.artifacts.get("stdout_tail", "")
    assert result.status in case.statuses, (result.status, result.error, stdout[-500:])
    assert result.metrics.get("combined_score", 0.0) <= case.max_score
    if result.status != "ok":
        assert is_failure(result.metrics, result.artifacts)
    for text in case.stdout_has:
        assert text in stdout, stdout[-1000:]
    for text in case.stdout_lacks:
        assert text not in stdout, stdout[-1000:]
    for text in (result.error, result.stderr_tail, *result.artifacts.values()):
        assert "\x00" not in text
        text.encode("utf-8")  # storable: no lone surrogates
    # The next candidate finds nothing of this one (in the same container unless it retired).
    after = await evaluator.evaluate(FINDER, program_id="finder", iteration=2)
    assert "nothing left" in after.artifacts.get("stdout_tail", ""), after.artifacts
    # The orchestrator is still running and still scores an honest program correctly.
    honest = await evaluator.evaluate(
        knapsack.initial_program or "", program_id="canary", iteration=3
    )
    assert honest.status == "ok" and honest.metrics["combined_score"] == 1.0
