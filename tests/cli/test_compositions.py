"""Scaffolds as compositions of named blocks, through the CLI: listing, a user's own
composition run offline in Docker (and resumed), and bad compositions refused up front."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.core.config import SLOTS
from harness.store.sqlite import SQLiteStore
from tests.cli.helpers import ROOT, galapagos

#: Blocks of two scaffolds: best_of_n's policy over a capped population, EvoX's labelled prompt,
#: and the full-rewrite proposer.
MIXED = """\
name: capped_best_of_n_rewrite
summary: best_of_n's reuse policy over a capped population, whole-program answers
blocks:
  population: keep_all
  selection_policy: best_of_n_reuse
  prompt: operator_labeled_default
  proposer: full_rewrite
  evaluator: task
  memory: none
population:
  capacity: 3
selection_policy:
  best_of_n: 2
  num_inspirations: 2
"""


@pytest.mark.slow
def test_blocks_json_lists_named_blocks_for_all_six_slots() -> None:
    proc = galapagos("blocks", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    by_slot: dict[str, set[str]] = {}
    for row in rows:
        by_slot.setdefault(row["slot"], set()).add(row["name"])
        assert row["summary"] and isinstance(row["config"], dict)
    assert set(by_slot) == set(SLOTS)
    assert {"keep_all", "evolved_strategy_store"} <= by_slot["population"]
    assert {"top_k", "best_of_n_reuse", "evolved_strategy_sampler"} <= by_slot["selection_policy"]
    assert {"diff", "full_rewrite"} <= by_slot["proposer"]
    assert {"none", "strategy_history"} <= by_slot["memory"]
    sampler = next(r for r in rows if r["name"] == "evolved_strategy_sampler")
    assert sampler["requires"] == {"population": ["StrategyStore"]}
    history = next(r for r in rows if r["name"] == "strategy_history")
    assert history["requires"] == {
        "population": ["StrategyStore"],
        "selection_policy": ["EvolvedStrategySampler"],
    }
    assert sampler["config"]["num_context_programs"]["default"] == 4


def test_scaffolds_json_gives_each_composition() -> None:
    proc = galapagos("scaffolds", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = {row["name"]: row for row in json.loads(proc.stdout)}
    assert rows["evox"]["composition"] == {
        "population": "evolved_strategy_store",
        "selection_policy": "evolved_strategy_sampler",
        "prompt": "operator_labeled_default",
        "proposer": "diff",
        "evaluator": "task",
        "memory": "strategy_history",
    }
    assert rows["best_of_n"]["composition"]["selection_policy"] == "best_of_n_reuse"
    assert all(set(row["composition"]) == set(SLOTS) for row in rows.values())


@pytest.mark.slow
def test_an_incompatible_composition_is_one_line_naming_both_blocks(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        MIXED.replace(
            "selection_policy: best_of_n_reuse", "selection_policy: evolved_strategy_sampler"
        )
    )
    store = tmp_path / "s.sqlite"
    proc = galapagos(
        "run", "--scaffold", str(bad), "--task", "circle_packing", "--store", str(store)
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "evolved_strategy_sampler" in lines[0] and "'keep_all'" in lines[0]
    assert "use one of: evolved_strategy_store" in lines[0]
    assert not store.exists()  # refused before anything started


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ("proposer: full_rewrite\n", "unknown proposer block 'rewrite_all'; valid proposer blocks"),
        ("blocks:\n", "a composition needs a 'blocks' mapping"),
    ],
)
def test_a_malformed_composition_is_refused_with_the_remedy(
    tmp_path: Path, change: str, expected: str
) -> None:
    text = MIXED.replace("proposer: full_rewrite\n", "proposer: rewrite_all\n")
    if change == "blocks:\n":
        text = "name: nothing\npopulation:\n  capacity: 3\n"
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    proc = galapagos("run", "--scaffold", str(bad), "--task", "circle_packing")
    assert proc.returncode == 2
    assert expected in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_swapping_one_block_with_set_takes_that_blocks_defaults(tmp_path: Path) -> None:
    """``--set blocks.proposer=full_rewrite`` on topk drops the diff proposer's section."""
    proc = galapagos(
        "run", "--scaffold", "topk", "--task", "circle_packing", "--iterations", "0",
        "--set", "blocks.proposer=full_rewrite", "--sandbox", "local", "--json",
        "--store", str(tmp_path / "s.sqlite"),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    store = SQLiteStore(tmp_path / "s.sqlite")
    config = store.get_run(json.loads(proc.stdout)["run_id"]).config
    store.close()
    assert config["blocks"]["proposer"] == "full_rewrite"
    assert config["proposer"] == {"max_solution_length": 60000}  # not the diff block's keys
    assert config["selection_policy"] == {"num_inspirations": 4}  # topk's own, kept


@pytest.mark.docker
@pytest.mark.slow
def test_a_users_composition_runs_offline_in_docker_and_resumes(tmp_path: Path) -> None:
    """Mixed blocks run through the CLI in Docker; stopped by Ctrl-C, the run resumes from the
    stored composition even after the file is gone."""
    composition = tmp_path / "mine.yaml"
    composition.write_text(MIXED)
    store = tmp_path / "s.sqlite"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "GALAPAGOS_"))}
    first = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "run", "--scaffold", str(composition),
         "--task", "circle_packing", "--iterations", "12", "--seed", "3", "--json",
         "--store", str(store)],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and first.poll() is None:
        if store.exists() and _done(store) >= 2:
            first.send_signal(signal.SIGINT)
            break
        time.sleep(0.2)
    out, err = first.communicate(timeout=300)
    assert first.returncode == 130, err
    summary = json.loads(out)
    assert summary["scaffold"] == "capped_best_of_n_rewrite"
    assert summary["status"] == "interrupted" and summary["iterations_done"] < 12
    composition.unlink()
    again = galapagos("resume", summary["run_id"], "--store", str(store), "--json", timeout=600)
    assert again.returncode == 0, again.stderr
    done = json.loads(again.stdout)
    assert done["status"] == "completed" and done["iterations_done"] == 12
    opened = SQLiteStore(store)
    programs = opened.programs(summary["run_id"])
    config = opened.get_run(summary["run_id"]).config
    opened.close()
    assert config["blocks"]["proposer"] == "full_rewrite"
    assert len({p.iteration for p in programs}) >= 2  # children were admitted


def _done(path: Path) -> int:
    store = SQLiteStore(path)
    try:
        runs = store.list_runs()
        return runs[0].iterations_done if runs else 0
    finally:
        store.close()
