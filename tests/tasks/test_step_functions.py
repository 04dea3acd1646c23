"""autocorrelation_c1, autocorrelation_c3, erdos_min_overlap: exact values, recomputation, and
invalid step functions."""

from __future__ import annotations

import numpy as np
import pytest

from harness.core.scoring import is_failure
from harness.evaluation.task import load_task

from .conftest import load_evaluator

c1 = load_evaluator("autocorrelation_c1")
c3 = load_evaluator("autocorrelation_c3")
erdos = load_evaluator("erdos_min_overlap")


def slow_autoconvolution(h: list[float]) -> list[float]:
    """conv(h, h) with plain loops: the independent reference."""
    n = len(h)
    return [
        sum(h[i] * h[k - i] for i in range(max(0, k - n + 1), min(k, n - 1) + 1))
        for k in range(2 * n - 1)
    ]


def seed_heights(name: str) -> np.ndarray:
    from galapagos_sandbox.testing import InProcessCandidate

    source = load_task(name).initial_program
    assert source is not None
    return np.asarray(InProcessCandidate(source).call("run")[0])


def improved(h: np.ndarray, signed: bool, iterations: int = 1500) -> np.ndarray:
    """A better construction than the seed, computed here by a longer soft-max descent."""
    for _ in range(iterations):
        conv = np.convolve(h, h)
        mag = np.abs(conv)
        z = 200.0 * mag / mag.max()
        p = np.exp(z - z.max())
        p /= p.sum()
        if signed:
            p *= np.sign(conv)
        total = h.sum()
        grad = 2 * np.correlate(p, h, "valid") / total**2 - 2 * float(p @ conv) / total**3
        h = h - 0.01 * np.abs(h).mean() * grad / np.abs(grad).max()
        if not signed:
            h = np.maximum(h, 0.0)
    return h


# ---- C1 --------------------------------------------------------------------------------------


def test_constant_function_gives_c1_of_exactly_2() -> None:
    metrics = c1.score_heights(np.ones(600))
    assert metrics["c1"] == pytest.approx(2.0, rel=1e-15)
    assert metrics["combined_score"] == pytest.approx(1.5052939684401607 / 2.0, rel=1e-15)


def test_c1_matches_plain_loops_and_is_scale_invariant() -> None:
    h = seed_heights("autocorrelation_c1")[:120] + 0.1
    expected = 2 * len(h) * max(slow_autoconvolution(h.tolist())) / float(h.sum()) ** 2
    assert c1.score_heights(h)["c1"] == pytest.approx(expected, rel=1e-12)
    assert c1.score_heights(1e6 * h)["c1"] == pytest.approx(expected, rel=1e-12)


def test_a_computed_c1_construction_lands_near_the_best_known() -> None:
    h = improved(seed_heights("autocorrelation_c1"), signed=False)
    metrics = c1.score_heights(h)
    # The AlphaEvolve record is 1.50529; this short descent gets within a few percent of it,
    # and nothing a correct scorer computes can beat the records by a wide margin.
    assert 1.50 < metrics["c1"] < 1.56
    assert metrics["combined_score"] == pytest.approx(1.5052939684401607 / metrics["c1"])


@pytest.mark.parametrize(
    ("heights", "message"),
    [
        (np.array([1.0, -0.1, 1.0]), "non-negative"),
        (np.zeros(10), "identically zero"),
        (np.array([1.0, np.nan]), "NaN"),
        (np.array([1.0, np.inf]), "NaN"),
        (np.ones((10, 2)), "1-D"),
        (np.array([]), "1-D"),
        (np.ones(20_001), "1-D"),
        ("1,2,3", "must be an array"),
        ([True, False], "real numbers"),
    ],
)
def test_invalid_c1_heights(heights, message: str) -> None:
    metrics = c1.score_heights(heights)
    assert is_failure(metrics) and message in metrics["error"]


def test_c1_reported_values_are_ignored() -> None:
    from galapagos_sandbox.testing import InProcessCandidate

    program = "import numpy as np\ndef run():\n    return np.ones(50), 0.5, 0.5, 7\n"
    assert c1.evaluate(InProcessCandidate(program))["c1"] == pytest.approx(2.0)


# ---- C3 --------------------------------------------------------------------------------------


def test_constant_function_gives_c3_of_exactly_2() -> None:
    assert c3.score_heights(np.ones(400))["c3"] == pytest.approx(2.0, rel=1e-15)


def test_c3_takes_the_absolute_value_of_negative_lobes() -> None:
    h = np.array([1.0, -2.0, 3.0, 0.5])
    expected = 2 * 4 * max(abs(v) for v in slow_autoconvolution(h.tolist())) / float(h.sum()) ** 2
    assert c3.score_heights(h)["c3"] == pytest.approx(expected, rel=1e-14)


def test_a_computed_c3_construction_lands_near_the_best_known() -> None:
    metrics = c3.score_heights(improved(seed_heights("autocorrelation_c3"), signed=True))
    assert 1.45 < metrics["c3"] < 1.62


@pytest.mark.parametrize(
    "heights",
    [np.array([1.0, -1.0]), np.array([1.0, np.nan]), np.zeros(5), np.ones((2, 2)), None],
    ids=["zero-integral", "nan", "zeros", "shape", "none"],
)
def test_invalid_c3_heights(heights) -> None:
    assert is_failure(c3.score_heights(heights))


# ---- Erdős -----------------------------------------------------------------------------------


def test_constant_half_gives_a_bound_of_exactly_one_half() -> None:
    metrics = erdos.score_heights(np.full(200, 0.5))
    assert metrics["c5_bound"] == pytest.approx(0.5, rel=1e-15)


def test_erdos_bound_matches_plain_loops() -> None:
    h = seed_heights("erdos_min_overlap")
    n = len(h)
    j = 1.0 - h
    shifts = range(-(n - 1), n)
    slow = max(sum(h[i + s] * j[i] for i in range(n) if 0 <= i + s < n) for s in shifts) * 2 / n
    assert erdos.score_heights(h)["c5_bound"] == pytest.approx(slow, rel=1e-12)


def test_erdos_integral_tolerance_is_1e9() -> None:
    h = seed_heights("erdos_min_overlap")
    inner = (h > 0.01) & (h < 0.99)
    nudged = h.copy()
    nudged[inner] *= 1 - 1e-11  # ∫h off by far less than 1e-9
    assert erdos.score_heights(nudged)["validity"] == 1.0
    nudged[inner] = h[inner] * (1 - 1e-6)  # the SkyDiscover check (atol 1e-3) would accept this
    metrics = erdos.score_heights(nudged)
    assert is_failure(metrics) and "∫h" in metrics["error"]


@pytest.mark.parametrize(
    ("heights", "message"),
    [
        (np.concatenate([np.full(100, 1.2), np.full(100, -0.2)]), "[0, 1]"),
        (np.full(200, 0.4), "∫h"),
        (np.array([0.5, np.nan]), "NaN"),
        (np.ones((4, 4)) * 0.5, "1-D"),
    ],
)
def test_invalid_erdos_heights(heights, message: str) -> None:
    metrics = erdos.score_heights(heights)
    assert is_failure(metrics) and message in metrics["error"]
