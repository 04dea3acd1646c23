"""Every shipped task: its card loads, its seed scores valid, below the best known, repeatably."""

from __future__ import annotations

import math

import pytest

from harness.core.scoring import get_score, is_failure
from harness.evaluation.task import load_task

from .conftest import SHIPPED, load_evaluator, run_stage, seed_metrics

EXPECTED = {
    "autocorrelation_c1",
    "autocorrelation_c3",
    "circle_packing",
    "circle_packing_rect",
    "erdos_min_overlap",
    "function_minimization",
    "heilbronn_convex",
    "heilbronn_triangle",
    "minmax_distance_2d",
    "minmax_distance_3d",
    "online_bin_packing",
}


def test_the_suite_ships_every_planned_task() -> None:
    assert set(SHIPPED) == EXPECTED


@pytest.mark.parametrize("name", SHIPPED)
def test_card_is_sealed_and_complete(name: str) -> None:
    card = load_task(name).card
    assert card.mode == "sealed"
    assert card.entry_point and card.metric and card.validity.strip()
    assert card.best_known is not None and card.best_known.source.strip()
    assert card.best_known.combined_score is not None
    assert card.limits.wall_s <= 60


@pytest.mark.parametrize("name", SHIPPED)
def test_seed_scores_valid_below_best_known_with_declared_metrics(name: str) -> None:
    card = load_task(name).card
    metrics = seed_metrics(name)
    assert not is_failure(metrics), metrics
    assert metrics["validity"] == 1.0
    assert card.metric in metrics and math.isfinite(metrics[card.metric])
    assert card.best_known is not None and card.best_known.combined_score is not None
    # Clearly below the best known, so a search has room to improve it.
    assert 0.0 < get_score(metrics) < 0.99 * card.best_known.combined_score


@pytest.mark.parametrize("name", SHIPPED)
def test_seed_scores_identically_twice(name: str) -> None:
    assert seed_metrics(name) == seed_metrics(name)


@pytest.mark.parametrize("name", SHIPPED)
def test_every_stage_scores_the_seed_valid(name: str) -> None:
    task = load_task(name)
    evaluator = load_evaluator(name)
    assert task.initial_program is not None
    for stage in task.card.stages:
        metrics = run_stage(task, evaluator, task.initial_program, stage.function)
        assert not is_failure(metrics), (stage.function, metrics)
        if stage.threshold is not None:
            assert get_score(metrics) >= stage.threshold


@pytest.mark.parametrize("name", SHIPPED)
def test_best_known_combined_score_matches_the_normalisation(name: str) -> None:
    """The card's best_known.combined_score is what the scorer would give the best-known value."""
    card = load_task(name).card
    assert card.best_known is not None and card.best_known.combined_score is not None
    seed = seed_metrics(name)
    raw, score = seed[card.metric], seed["combined_score"]
    if name == "online_bin_packing":
        expected = (1 + card.best_known.value / 100) / (1 + raw / 100) / score
    elif name == "function_minimization":
        expected = (1 + raw - card.best_known.value) * score
    elif card.direction == "maximize":
        expected = card.best_known.value / raw * score
    else:
        expected = raw / card.best_known.value * score
    assert expected == pytest.approx(card.best_known.combined_score, rel=1e-8)


def test_a_missing_seed_program_is_an_error_unless_the_card_says_from_scratch(tmp_path) -> None:
    import shutil

    from harness.core.errors import TaskError

    folder = tmp_path / "fm"
    shutil.copytree(load_task("function_minimization").path, folder)
    (folder / "initial_program.py").unlink()
    with pytest.raises(TaskError, match="initial program initial_program.py does not exist"):
        load_task(str(folder))
    card = folder / "task.yaml"
    card.write_text(card.read_text() + "from_scratch: true\n")
    assert load_task(str(folder)).initial_program is None


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_task_has_a_domain_system_message(name: str) -> None:
    card = load_task(name).card
    assert card.system_message and len(card.system_message) > 200
    assert "expert" in card.system_message
    if name != "online_bin_packing":  # its best known is a percentage, stated as such
        digits = f"{card.best_known.value:.12f}".lstrip("-")[:5]  # truncated, not rounded
        assert digits in card.system_message, (name, digits)
