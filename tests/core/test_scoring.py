"""Score semantics and every failure-predicate edge of the reference (§7.2)."""

from __future__ import annotations

import math

import pytest

from harness.core.scoring import get_score, is_failure


@pytest.mark.parametrize(
    ("metrics", "artifacts", "failed"),
    [
        ({"error": 0.0}, {}, False),  # the generic crash dict is stored with score 0
        ({"combined_score": 0, "error": "x"}, {}, True),
        ({"combined_score": 0.0}, {"error": "boom"}, True),  # error in the artifacts counts too
        ({"combined_score": False, "error": "x"}, {}, True),  # False == 0, as in the reference
        ({"combined_score": True, "error": "x"}, {}, False),
        ({"combined_score": 0.0}, {}, False),
        ({"combined_score": 0.2, "error": "x"}, {}, False),
        ({"timeout": True, "validity": 1}, {}, False),
        ({"timeout": True}, {}, True),
        ({"timeout": "yes"}, {}, False),  # only the literal True
        ({"validity": 0}, {}, True),
        ({"validity": 0.0, "combined_score": 0.9}, {}, True),
        ({"validity": -1}, {}, True),
        ({"validity": 1, "combined_score": 0.0}, {}, False),
        ({}, {}, False),
    ],
)
def test_failure_predicate_edges(metrics: dict, artifacts: dict, failed: bool) -> None:
    assert is_failure(metrics, artifacts) is failed


def test_score_prefers_combined_score() -> None:
    assert get_score({"combined_score": 0.7, "a": 100.0}) == 0.7


def test_score_falls_back_to_mean_of_numeric_non_bool_metrics() -> None:
    assert get_score({"a": 1, "b": 0, "flag": True, "note": "text"}) == 0.5


def test_score_of_empty_or_non_numeric_metrics_is_zero() -> None:
    assert get_score({}) == 0.0
    assert get_score({"error": "boom"}) == 0.0


def test_unparseable_combined_score_falls_back_to_mean() -> None:
    assert get_score({"combined_score": "n/a", "a": 2.0}) == 2.0


def test_non_finite_score_sorts_last() -> None:
    assert get_score({"combined_score": float("nan")}) == -math.inf
