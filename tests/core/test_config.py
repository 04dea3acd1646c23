"""Config loading: layers merge in order, and a bad value names the layer it came from."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.core.config import MAX_SEED
from harness.core.errors import ConfigError
from harness.core.registry import load_config


def test_later_layers_win(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("general:\n  max_iterations: 7\n  inner_retry_times: 2\n")
    _, config = load_config(
        "topk",
        config_file=cfg,
        overrides=["general.inner_retry_times=3"],
        flags={"general": {"max_iterations": 9}},
    )
    assert config.general.max_iterations == 9
    assert config.general.inner_retry_times == 3


def test_each_bad_value_names_its_source(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("general:\n  inner_retry_times: 0\n")
    with pytest.raises(ConfigError) as info:
        load_config(
            "best_of_n",
            config_file=cfg,
            overrides=["selection_policy.best_of_n=0"],
            flags={"seed": -1},
            flag_names={"seed": "--seed"},
        )
    message = str(info.value)
    assert "'seed': Input should be greater than or equal to 0 (--seed)" in message
    assert (
        f"'general.inner_retry_times': Input should be greater than or equal to 1 ({cfg}:2)"
        in message
    )
    # The library names an override by its own word; the CLI's flag names come from the CLI.
    assert "(set selection_policy.best_of_n=0)" in message and "--set" not in message
    assert "scaffolds/best_of_n/config.yaml" not in message


def test_seed_fits_a_signed_64_bit_integer() -> None:
    _, config = load_config("topk", flags={"seed": MAX_SEED})
    assert config.seed == MAX_SEED
    with pytest.raises(ConfigError, match=r"invalid config \(settings\): 'seed'"):
        load_config("topk", flags={"seed": MAX_SEED + 1})


def test_a_bad_value_is_an_error_even_where_a_flag_overrides_it(tmp_path: Path) -> None:
    for override in ("general.max_iterations=abc", "general=3"):
        with pytest.raises(ConfigError, match=rf"\(--set {override}\)"):
            load_config(
                "topk",
                names={"set": "--set"},
                overrides=[override],
                flags={"general": {"max_iterations": 1}},
                flag_names={"general.max_iterations": "--iterations"},
            )


def test_flags_that_replace_file_or_set_values_leave_a_note(tmp_path: Path) -> None:
    from harness.runs import plan_run

    cfg = tmp_path / "c.yaml"
    cfg.write_text("seed: 4\n")
    plan = plan_run(
        scaffold="topk",
        task="function_minimization",
        config_file=cfg,
        overrides=["general.max_iterations=3"],
        iterations=1,
        seed=1,
        names={"seed": "--seed", "iterations": "--iterations", "set": "--set"},
    )
    assert plan.config.general.max_iterations == 1 and plan.config.seed == 1
    assert f"seed: 4 from {cfg}:1 overridden by --seed 1" in plan.notes
    assert (
        "general.max_iterations: 3 from --set general.max_iterations=3 overridden by "
        "--iterations 1" in plan.notes
    )
