"""The in-process candidate double that task authors use in evaluator unit tests."""

from __future__ import annotations

import numpy as np
import pytest
from galapagos_sandbox import CandidateBadOutput, CandidateCrashed, CandidateRaised
from galapagos_sandbox.testing import InProcessCandidate, evaluate_in_process

import harness.sandbox  # noqa: F401


def test_answers_go_through_the_same_plain_data_conversion() -> None:
    cand = InProcessCandidate(
        "import numpy as np\n"
        "def f(t):\n"
        "    return (np.float32(1.5), np.arange(3), type(t).__name__)\n"
    )
    scalar, arr, arg_type = cand.call("f", (1, 2))
    assert scalar == 1.5 and type(scalar) is float
    assert isinstance(arr, np.ndarray) and arg_type == "list"


def test_failures_raise_the_sandbox_errors() -> None:
    cand = InProcessCandidate(
        "import sys\nclass E:\n    pass\ndef bad():\n    return E()\n"
        "def boom():\n    raise ValueError('x')\ndef leave():\n    sys.exit(3)\n"
    )
    with pytest.raises(CandidateBadOutput, match="unsupported type"):
        cand.call("bad")
    with pytest.raises(CandidateRaised, match="ValueError") as info:
        cand.call("boom")
    assert info.value.exc_type == "ValueError" and "boom" in info.value.traceback
    with pytest.raises(CandidateCrashed):
        cand.call("leave")
    with pytest.raises(CandidateRaised, match="no function"):
        cand.call("missing")


def test_evaluate_in_process_returns_normalised_metrics() -> None:
    def evaluate(candidate: object) -> dict:
        return {"combined_score": float(candidate.call("solve")), "error": "", "note": "n"}

    metrics, artifacts = evaluate_in_process(evaluate, "def solve():\n    return 2\n")
    assert metrics["combined_score"] == 2.0 and artifacts["note"] == "n"
