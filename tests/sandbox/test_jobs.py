"""Result documents from the runner become EvalResults; failures always look like failures."""

from __future__ import annotations

import math

import pytest

from harness.core.scoring import is_failure
from harness.sandbox.jobs import STATUSES, failure_result, result_from_document


@pytest.mark.parametrize("status", sorted(STATUSES - {"ok"}))
def test_every_failure_status_satisfies_the_failure_predicate(status: str) -> None:
    result = failure_result(status, "why")  # type: ignore[arg-type]
    assert result.status == status
    assert is_failure(result.metrics, result.artifacts)
    assert result.artifacts["error"] == "why"
    assert result.timed_out == (status == "timeout")


def test_an_ok_document_keeps_its_metrics_and_the_candidate_output() -> None:
    result = result_from_document(
        {
            "status": "ok",
            "metrics": {"combined_score": 0.7, "validity": 1.0},
            "artifacts": {"a": "b"},
            "stdout_tail": "printed",
        },
        duration_s=1.0,
    )
    assert result.status == "ok" and result.metrics["combined_score"] == 0.7
    assert result.artifacts == {"a": "b", "stdout_tail": "printed"}


def test_validity_zero_makes_the_result_invalid() -> None:
    result = result_from_document(
        {"status": "ok", "metrics": {"combined_score": 0.0, "validity": 0}, "artifacts": {}},
        duration_s=0.0,
    )
    assert result.status == "invalid" and is_failure(result.metrics, result.artifacts)


@pytest.mark.parametrize(
    "doc",
    [
        {"status": "ok", "metrics": {"combined_score": math.nan}, "artifacts": {}},
        {"status": "ok", "metrics": {"combined_score": 10**400}, "artifacts": {}},
        {"status": "ok", "metrics": [1], "artifacts": {}},
        {"status": "pwned", "metrics": {"combined_score": 1e9}},
        {"status": "ok"},
    ],
)
def test_malformed_documents_are_invalid_results(doc: dict) -> None:
    result = result_from_document(doc, duration_s=0.0)
    assert result.status == "invalid_result"
    assert result.metrics["combined_score"] == 0.0


def test_failure_documents_carry_their_reason_and_tails() -> None:
    result = result_from_document(
        {
            "status": "timeout",
            "error": "too slow",
            "traceback": "tb",
            "stderr_tail": "e\x00",
            "metrics": {"combined_score": 1e9},
        },
        duration_s=3.0,
    )
    assert result.status == "timeout" and result.metrics["combined_score"] == 0.0
    assert result.metrics["timeout"] is True
    assert result.artifacts["traceback"] == "tb" and "\x00" not in result.stderr_tail


def test_the_modules_imported_ahead_are_the_cards_and_the_evaluators_standard_ones() -> None:
    from harness.sandbox.jobs import warm_modules
    from harness.sandbox.protocol import Job

    evaluator = b"import json, os.path\nfrom concurrent.futures import wait\nimport numpy as np\n"
    evaluator += b"import scipy.optimize\nfrom . import helper\nimport antigravity\nimport mytask\n"
    job = Job(mode="compat", function="evaluate", candidate="", files={"evaluator.py": evaluator},
              preload=("numpy",))  # fmt: skip
    assert warm_modules(job) == (
        "numpy", "json", "os.path", "concurrent.futures", "numpy.random",
    )  # fmt: skip
    broken = Job(mode="sealed", function="evaluate", candidate="", files={"evaluator.py": b"("})
    assert warm_modules(broken) == ()
