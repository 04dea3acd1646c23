"""J, the scoring window and the stagnation trigger, against the reference's numbers."""

from __future__ import annotations

import math

import pytest

from scaffolds.evox.scoring import Stagnation, WindowScorer, switch_interval, window_score


def test_j_matches_the_reference_worked_example() -> None:
    # start 0.9, end 0.95, H = 10: 0.05 · (1 + ln 1.9) / √10
    assert window_score(0.9, 0.95, 10) == pytest.approx(0.02596, abs=5e-6)
    assert window_score(0.9, 0.95, 10) == pytest.approx(0.05 * (1 + math.log(1.9)) / math.sqrt(10))


def test_a_negative_start_weighs_one() -> None:
    assert window_score(-2.0, -1.0, 4) == pytest.approx(1.0 * 1.0 / 2.0)
    assert window_score(-0.5, 0.5, 1) == pytest.approx(1.0)


def test_j_is_never_negative_and_uses_the_fixed_horizon() -> None:
    assert window_score(0.8, 0.7, 10) == 0.0
    scorer = WindowScorer()
    scorer.reset(0.5, start_iteration=3)
    for best in (0.5, 0.6, 0.55, 0.7):
        scorer.record_step(best)
    metrics = scorer.metrics(horizon=10)  # four steps, horizon still 10
    assert metrics["combined_score"] == pytest.approx(window_score(0.5, 0.7, 10))
    assert metrics["search_window_end_score"] == 0.7
    assert metrics["window_start_iteration"] == 3
    assert metrics["search_horizon"] == 10


def test_an_empty_window_is_scored_on_the_current_best() -> None:
    scorer = WindowScorer()
    scorer.reset(0.4)
    assert scorer.metrics(5, current_best=0.6)["combined_score"] == pytest.approx(
        window_score(0.4, 0.6, 5)
    )


def test_the_default_switch_interval_is_a_tenth_of_the_run() -> None:
    assert switch_interval(100) == 10
    assert switch_interval(60) == 6
    assert switch_interval(5) == 1
    assert switch_interval(100, configured=7) == 7


def test_stagnation_counts_steps_without_a_gain_above_the_threshold() -> None:
    stag = Stagnation(interval=3)
    assert not stag.step(0.5)  # first call: resets the counter
    assert not stag.step(0.5)
    assert not stag.step(0.5075)  # +0.0075 is not more than the threshold
    assert stag.step(0.515)  # third stagnant step fires and resets
    assert stag.count == 0
    assert not stag.step(0.6)  # a real gain resets
    assert not stag.step(0.6)
    assert not stag.step(0.6)
    assert stag.step(0.6)


def test_slow_gains_that_add_up_still_count_as_stagnation() -> None:
    stag = Stagnation(interval=4)
    fired = [stag.step(0.5 + 0.009 * i) for i in range(6)]
    assert fired == [False, False, False, False, True, False]


def test_window_and_counter_round_trip_through_state() -> None:
    scorer, stag = WindowScorer(), Stagnation(interval=3)
    scorer.reset(0.2, start_iteration=4)
    scorer.record_step(0.3)
    stag.step(0.2)
    stag.step(0.2)
    scorer2, stag2 = WindowScorer(), Stagnation(interval=3)
    scorer2.load_state_dict(scorer.state_dict())
    stag2.load_state_dict(stag.state_dict())
    assert scorer2.metrics(3) == scorer.metrics(3)
    assert (stag2.count, stag2.last_best) == (1, 0.2)
