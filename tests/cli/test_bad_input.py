"""Bad input gets a one-line error with a remedy and exit code 1 or 2, and loses nothing."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from harness.core.store import RunRecord
from harness.store.sqlite import SQLiteStore
from tests.cli.helpers import ROOT, galapagos

#: The main job as the README runs it (each test adds what is wrong with it).
RUN = ("run", "--scaffold", "best_of_n", "--task", "circle_packing")


@pytest.fixture
def existing(tmp_path: Path) -> Path:
    """A store that already holds a run, to show bad input loses nothing from it."""
    path = tmp_path / "store.sqlite"
    store = SQLiteStore(path)
    store.create_run(
        RunRecord(
            id="kept",
            scaffold="topk",
            task="circle_packing",
            task_path="",
            config={"x": 1},
            seed=0,
            max_iterations=3,
            status="completed",
            best_score=0.5,
        )
    )
    store.close()
    return path


def assert_clean_error(proc: subprocess.CompletedProcess, code: int, *needles: str) -> None:
    assert proc.returncode == code, proc.stderr
    lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr  # one line, no traceback
    assert lines[0].startswith("error:")
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in lines[0]
    assert proc.stdout == ""


def assert_store_intact(path: Path) -> None:
    store = SQLiteStore(path)
    runs = store.list_runs()
    assert [r.id for r in runs] == ["kept"]
    assert runs[0].config == {"x": 1} and runs[0].best_score == 0.5
    store.close()


def test_unknown_scaffold(existing: Path) -> None:
    proc = galapagos("run", "--scaffold", "nope", "--task", "circle_packing", store=existing)
    assert_clean_error(proc, 2, "unknown scaffold 'nope'", "best_of_n")
    assert_store_intact(existing)


def test_unknown_task(existing: Path) -> None:
    proc = galapagos("run", "--scaffold", "topk", "--task", "no_such_task", store=existing)
    assert_clean_error(proc, 2, "unknown task 'no_such_task'", "circle_packing")
    assert_store_intact(existing)


def test_malformed_yaml(existing: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("general:\n  max_iterations: [1, 2\n")
    proc = galapagos(
        "run",
        "--scaffold",
        "topk",
        "--task",
        "circle_packing",
        "--config",
        str(bad),
        store=existing,
    )
    assert_clean_error(proc, 2, "malformed YAML", "line")
    assert_store_intact(existing)


def test_unknown_config_key_in_file_lists_valid_keys(existing: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("selection_policy:\n  bestofn: 3\n")
    proc = galapagos(
        *RUN,
        "--config",
        str(cfg),
        store=existing,
    )
    assert_clean_error(
        proc, 2, "unknown key 'selection_policy.bestofn'", "best_of_n, num_inspirations"
    )
    assert_store_intact(existing)


def test_unknown_config_key_in_set(existing: Path) -> None:
    proc = galapagos(
        "run",
        "--scaffold",
        "topk",
        "--task",
        "circle_packing",
        "--set",
        "general.max_iter=5",
        store=existing,
    )
    assert_clean_error(proc, 2, "unknown key 'general.max_iter'", "max_iterations")
    assert_store_intact(existing)


def test_unreachable_llm_endpoint(existing: Path) -> None:
    proc = galapagos(
        "run",
        "--scaffold",
        "topk",
        "--task",
        "circle_packing",
        "--api-base",
        "http://127.0.0.1:9/v1",
        "--model",
        "some-model",
        store=existing,
    )
    assert_clean_error(proc, 1, "127.0.0.1:9")
    assert_store_intact(existing)


@pytest.mark.slow
def test_resume_unknown_run(existing: Path) -> None:
    proc = galapagos("resume", "no-such-run", store=existing)
    assert_clean_error(proc, 2, "no run 'no-such-run'", "galapagos runs")
    assert_store_intact(existing)


def test_seed_out_of_range(existing: Path) -> None:
    proc = galapagos(
        "run",
        "--scaffold",
        "topk",
        "--task",
        "circle_packing",
        "--seed",
        "99999999999999999999",
        "--sandbox",
        "local",
        store=existing,
    )
    assert_clean_error(proc, 2, "invalid config (--seed)", "'seed'")
    assert_store_intact(existing)


def test_invalid_value_names_the_set_flag(existing: Path) -> None:
    proc = galapagos(
        *RUN,
        "--set",
        "selection_policy.best_of_n=0",
        store=existing,
    )
    assert_clean_error(
        proc, 2, "invalid config (--set selection_policy.best_of_n=0)", "greater than or equal"
    )
    assert "config.yaml" not in proc.stderr
    assert_store_intact(existing)


def test_invalid_value_names_the_config_file(existing: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "mine.yaml"
    cfg.write_text("selection_policy:\n  best_of_n: 0\n")
    proc = galapagos(
        *RUN,
        "--config",
        str(cfg),
        store=existing,
    )
    assert_clean_error(proc, 2, f"invalid config ({cfg}:2)", "'selection_policy.best_of_n'")
    assert_store_intact(existing)


def test_malformed_task_yaml_names_the_file_and_line(existing: Path, tmp_path: Path) -> None:
    folder = tmp_path / "bad_task"
    shutil.copytree(ROOT / "tasks" / "function_minimization", folder)
    card = folder / "task.yaml"
    card.write_text("name: bad_task\nobjective: [unclosed\n")
    proc = galapagos("run", "--scaffold", "topk", "--task", str(folder), store=existing)
    assert_clean_error(proc, 2, f"malformed YAML in {card} at line ", "column")
    assert "<unicode string>" not in proc.stderr
    assert_store_intact(existing)
