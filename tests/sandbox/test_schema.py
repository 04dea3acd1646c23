"""Result schema: what a result may contain (applied in the container and on the host)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from galapagos_sandbox import EvaluationResult
from galapagos_sandbox.schema import MAX_ARTIFACT_CHARS, ResultError, clean_text, normalize_result

import harness.sandbox  # noqa: F401


def test_numbers_stay_metrics_and_strings_move_to_artifacts() -> None:
    metrics, artifacts = normalize_result(
        {
            "combined_score": 0.5,
            "ok": True,
            "n": np.int64(3),
            "error": "bad",
            "note": "hi",
            "centers": [[0.1, 0.2]],
            "artifacts": {"log": b"bytes"},
        }
    )
    assert metrics == {"combined_score": 0.5, "ok": True, "n": 3, "error": "bad"}
    assert artifacts["note"] == "hi" and artifacts["log"] == "bytes"
    assert artifacts["centers"] == "[[0.1, 0.2]]"


def test_evaluation_result_objects_are_accepted() -> None:
    metrics, artifacts = normalize_result(EvaluationResult({"combined_score": 1.0}, {"a": "b"}))
    assert metrics == {"combined_score": 1.0} and artifacts == {"a": "b"}


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, np.float64("nan"), 10**400])
def test_non_finite_or_unrepresentable_metrics_are_refused(bad: object) -> None:
    with pytest.raises(ResultError):
        normalize_result({"combined_score": bad})


@pytest.mark.parametrize("bad", [None, 3.0, "text", [1, 2]])
def test_only_dicts_and_evaluation_results_are_results(bad: object) -> None:
    with pytest.raises(ResultError):
        normalize_result(bad)


def test_sizes_are_capped() -> None:
    with pytest.raises(ResultError):
        normalize_result({f"m{i}": 1.0 for i in range(1000)})
    _, artifacts = normalize_result({"combined_score": 1.0, "log": "x" * (10 * MAX_ARTIFACT_CHARS)})
    assert len(artifacts["log"]) < 2 * MAX_ARTIFACT_CHARS


def test_text_is_made_storable() -> None:
    text = clean_text("a\x00b\udcff")
    assert "\x00" not in text
    text.encode("utf-8")
