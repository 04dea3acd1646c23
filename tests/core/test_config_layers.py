"""The config pipeline: ordered, named layers; every value's source; one-line errors naming the
layer (file:line); ``galapagos run --explain-config``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.core.config_layers import Layer, Layers, yaml_lines
from harness.core.errors import ConfigError
from harness.core.registry import load_config
from harness.runs import plan_run

ROOT = Path(__file__).resolve().parents[2]
FLAGS = {
    "iterations": "--iterations", "seed": "--seed", "set": "--set", "scaffold": "--scaffold"
}  # fmt: skip


def _sources(plan: object) -> dict[str, tuple[object, str]]:
    return {key: (value, source) for key, value, source in plan.sources}  # type: ignore[attr-defined]


def _folder(tmp_path: Path, config: str) -> Path:
    """A copy of OpenEvolve's function_minimization example with ``config`` as its file."""
    src = ROOT / "tests" / "data" / "peers" / "openevolve" / "examples" / "function_minimization"
    if not src.is_dir():
        pytest.fail(f"test data missing: {src}")
    dst = tmp_path / "folder"
    dst.mkdir()
    for name in ("initial_program.py", "evaluator.py"):
        (dst / name).write_text((src / name).read_text())
    (dst / "config.yaml").write_text(config)
    return dst


def test_every_layer_wins_over_the_ones_below_and_is_named(tmp_path: Path) -> None:
    """scaffold < task folder < --config < --set < flag, for one key set by all of them."""
    folder = _folder(tmp_path, "max_iterations: 11\nrandom_seed: 21\nllm:\n  temperature: 0.5\n")
    cfg = tmp_path / "c.yaml"
    cfg.write_text("general:\n  max_iterations: 12\n  inner_retry_times: 3\nseed: 22\n")

    def plan(**kw: object) -> dict[str, tuple[object, str]]:
        return _sources(plan_run(scaffold="topk", task=str(folder), names=FLAGS, **kw))  # type: ignore[arg-type]

    scaffold_file = str(ROOT / "scaffolds" / "topk" / "config.yaml")
    shown = plan()
    assert shown["general.max_iterations"] == (11, f"{folder / 'config.yaml'}:1")
    assert shown["general.max_parallel_iterations"][1].startswith(scaffold_file + ":")
    assert shown["general.log_prompts"] == (True, "default")
    assert shown["scaffold"] == ("topk", "--scaffold")
    shown = plan(config_file=cfg)
    assert shown["general.max_iterations"] == (12, f"{cfg}:2")
    assert shown["general.inner_retry_times"] == (3, f"{cfg}:3")
    assert shown["seed"] == (22, f"{cfg}:4")
    shown = plan(config_file=cfg, overrides=["general.max_iterations=13"])
    assert shown["general.max_iterations"] == (13, "--set general.max_iterations=13")
    shown = plan(config_file=cfg, overrides=["general.max_iterations=13"], iterations=14, seed=5)
    assert shown["general.max_iterations"] == (14, "--iterations")
    assert shown["seed"] == (5, "--seed")
    assert shown["general.inner_retry_times"] == (3, f"{cfg}:3")


def test_the_python_api_names_its_keyword_settings_and_config_mapping() -> None:
    plan = plan_run(
        scaffold="topk",
        task="function_minimization",
        config_data={"general": {"inner_retry_times": 2}, "seed": 9},
        seed=4,
    )
    shown = _sources(plan)
    assert shown["general.inner_retry_times"] == (2, "config")
    assert shown["seed"] == (4, "seed")
    assert "seed: 9 from config overridden by seed 4" in plan.notes
    assert not any("--" in note for note in plan.notes)


def test_an_endpoint_setting_and_the_resolution_are_named() -> None:
    plan = plan_run(
        scaffold="topk",
        task="function_minimization",
        api_base="http://127.0.0.1:9/v1",
        models=("m1",),
        names={"api_base": "--api-base", "models": "--model"},
    )
    shown = _sources(plan)
    assert shown["llm.api_base"] == ("http://127.0.0.1:9/v1", "--api-base")
    assert shown["llm.models"][1] == "--model"
    assert shown["llm.provider"] == ("openai", "resolved (endpoint, environment, price table)")


def test_layers_keep_their_order_and_name_file_lines(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="out of order"):
        Layers([Layer("set", "x", {}), Layer("config", "y", {})])
    with pytest.raises(ValueError, match="layer kind"):
        Layer("cli", "x", {})
    assert yaml_lines("a:\n  b: 1\n  c:\n    d: 2\ne: [1, 2]\n") == {
        "a": 1, "a.b": 2, "a.c": 3, "a.c.d": 4, "e": 5,
    }  # fmt: skip
    layer = Layer("config", "f.yaml", {"a": {"b": 1}, "c": 3}, {"a": 1, "a.b": 2})
    assert layer.where("a.b") == "f.yaml:2" and layer.where("a.x") == "f.yaml:1"
    assert layer.where("c") == "f.yaml"
    stack = Layers([layer, Layer("set", "set a=5", {"a": 5})])
    assert stack.source_of("a.b") is stack[1]  # a parent set to a scalar replaces the subtree
    assert stack.source_of("c") is layer and stack.source_of("zz") is None


def test_an_unknown_key_is_one_line_naming_the_file_and_line(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("general:\n  max_iterations: 2\n  max_iteratons: 3\n")
    with pytest.raises(ConfigError) as info:
        load_config("topk", config_file=cfg)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"invalid config ({cfg}:3): unknown key 'general.max_iteratons'")


def test_a_bad_type_names_its_layer(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config("topk", overrides=["general.max_iterations=many"], names={"set": "--set"})
    message = str(info.value)
    assert "\n" not in message
    assert "(--set general.max_iterations=many)" in message
    assert "read as YAML" in message
    folder = _folder(tmp_path, "max_iterations: -3\n")
    with pytest.raises(ConfigError, match=rf"\({folder / 'config.yaml'}:1\)"):
        plan_run(scaffold="topk", task=str(folder))


def test_bad_override_syntax_is_one_line_in_the_callers_words() -> None:
    with pytest.raises(ConfigError, match=r"^'--set general': expected KEY=VALUE"):
        load_config("topk", overrides=["general"], names={"set": "--set"})
    with pytest.raises(ConfigError, match=r"^'set general': expected KEY=VALUE"):
        load_config("topk", overrides=["general"])
    with pytest.raises(ConfigError, match="not valid YAML") as info:
        load_config("topk", overrides=["prompt.system_message=[oops"])
    assert "\n" not in str(info.value)


def test_library_errors_name_settings_by_keyword_and_the_cli_by_flag(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^offline runs the offline model: drop api_base"):
        plan_run(scaffold="topk", task="function_minimization", offline=True, models=("m",))
    with pytest.raises(ConfigError, match=r"no scaffold given; name one with scaffold "):
        load_config(None)
    with pytest.raises(ConfigError, match=r"no scaffold given; name one with --scaffold "):
        load_config(None, names={"scaffold": "--scaffold"})


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_explain_config_prints_each_value_with_its_source_and_runs_nothing(
    tmp_path: Path,
) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("seed: 4\ngeneral:\n  max_iterations: 3\n")
    store = tmp_path / "runs.db"
    args = ["run", "-s", "topk", "-t", "function_minimization", "-c", str(cfg), "--store",
            str(store), "--set", "general.inner_retry_times=2", "--seed", "5",
            "--explain-config"]  # fmt: skip
    proc = _cli(*args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "seed: 5  # --seed" in lines
    assert f"general.max_iterations: 3  # {cfg}:3" in lines
    assert "general.inner_retry_times: 2  # --set general.inner_retry_times=2" in lines
    assert "general.log_prompts: true  # default" in lines
    assert f"note: seed: 4 from {cfg}:1 overridden by --seed 5" in proc.stderr
    assert "started run" not in proc.stderr and not store.exists()  # nothing ran
    proc = _cli(*args, "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = {row["key"]: row for row in json.loads(proc.stdout)}
    assert rows["seed"] == {"key": "seed", "value": 5, "source": "--seed"}
    assert not store.exists()


def test_explain_config_of_a_bad_config_is_the_one_line_error(tmp_path: Path) -> None:
    proc = _cli("run", "-s", "topk", "-t", "function_minimization", "--set", "general.nope=1",
                "--explain-config", cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "unknown key 'general.nope'" in lines[0]
    assert "(--set general.nope=1)" in lines[0]


@pytest.mark.slow
def test_resume_explain_config_names_the_stored_config_and_the_new_settings(
    tmp_path: Path,
) -> None:
    store = tmp_path / "runs.db"
    proc = _cli("run", "-s", "topk", "-t", "function_minimization", "-i", "1", "--sandbox",
                "local", "--store", str(store), "-q", "--json", cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    run_id = json.loads(proc.stdout)["run_id"]
    args = ["resume", run_id, "--store", str(store), "--iterations", "3", "--max-tokens",
            "99999", "--explain-config", "--json"]  # fmt: skip
    proc = _cli(*args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = {row["key"]: (row["value"], row["source"]) for row in json.loads(proc.stdout)}
    assert rows["general.max_iterations"] == (3, "--iterations")
    assert rows["llm.max_total_tokens"] == (99999, "--max-tokens")
    assert rows["seed"] == (0, f"stored config of run {run_id}")
    proc = _cli("show", run_id, "--store", str(store), "--json", cwd=tmp_path)
    assert json.loads(proc.stdout)["max_iterations"] == 1  # nothing resumed
