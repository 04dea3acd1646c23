"""``get_score`` and the failure predicate against SkyDiscover HEAD 59643ef (golden trace) on
every mix of the edge values (``tests/oracles/cases.py``): bool, text and missing
``combined_score``; bool metrics beside numeric ones; ``error`` in the metrics or artifacts.

Pinned from HEAD because that is the reference our scoring follows, and 0.1.0 differs in both
(it counts bools in the mean, and ignores an ``error`` in the artifacts); the live tests below
show that difference, so the trace is not something 0.1.0 could check.  Non-finite scores are
left out: ours become -inf (documented in ``harness/core/scoring.py``).
"""

from __future__ import annotations

from typing import Any

import pytest

from harness.core.scoring import get_score, is_failure
from tests.oracles import cases
from tests.oracles.reference import REGENERATE, Reference, golden


def head(part: str, inputs: list[Any]) -> list[Any]:
    trace = golden("scoring")["trace"][part]
    assert trace["inputs"] == cases.digest(inputs), (
        f"the {part} cases changed since HEAD's trace was recorded: {REGENERATE} scoring"
    )
    results: list[Any] = trace["results"]
    return results


def test_get_score_equals_head_on_every_case() -> None:
    inputs = cases.score_cases()
    theirs = head("scores", inputs)
    found = [
        (m, get_score(m), want)
        for m, want in zip(inputs, theirs, strict=True)
        if get_score(m) != want
    ]
    assert found == [], found[:5]


def test_failure_predicate_equals_head_on_every_case() -> None:
    inputs = cases.failure_cases()
    theirs = head("failures", inputs)
    found = [
        (c, want)
        for c, want in zip(inputs, theirs, strict=True)
        if is_failure(c["metrics"], c["artifacts"]) != want
    ]
    assert found == [], found[:5]
    assert 0 < sum(theirs) < len(theirs)
    # C1: ``False`` as combined_score plus an error is a failure in the reference.
    assert any(
        want and c["metrics"].get("combined_score") is False
        for c, want in zip(inputs, theirs, strict=True)
    )


@pytest.mark.slow
def test_scoring_is_where_0_1_0_and_head_differ(reference: Reference) -> None:
    scores, failures = cases.score_cases(), cases.failure_cases()
    old = reference.probe("get_scores", scores)
    new = head("scores", scores)
    differ = [m for m, a, b in zip(scores, old, new, strict=True) if a != b]
    # 0.1.0 counts a bool metric in the mean ...
    assert differ != []
    assert all(any(isinstance(v, bool) for v in m.values()) for m in differ)
    old = reference.probe("failure_verdicts", failures)
    new = head("failures", failures)
    differ = [c for c, a, b in zip(failures, old, new, strict=True) if a != b]
    # ... and ignores an error in the artifacts (HEAD fails those, 0.1.0 keeps them).
    assert differ != []
    assert all("error" in c["artifacts"] and "error" not in c["metrics"] for c in differ)
    assert all(is_failure(c["metrics"], c["artifacts"]) for c in differ)
