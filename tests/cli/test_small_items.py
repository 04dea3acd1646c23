"""Small things a user trips on: a mistyped store, where tasks come from, a file that does not
parse, a failure line cut mid-word, click's three-line usage errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.cli.helpers import galapagos
from tests.cli.results_helpers import task_folder

GOOD = "return {'combined_score': min_dist(xs), 'validity': 1.0, 'min_dist': min_dist(xs)}"


def test_a_mistyped_store_folder_is_refused_and_nothing_is_created(tmp_path: Path) -> None:
    typo = tmp_path / "reslts" / "store.sqlite"
    proc = galapagos("run", "-s", "topk", "-t", "circle_packing", "-i", "1", "--store", str(typo))
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"error: --store {typo}: the folder {typo.parent} does not exist (a typo?); create it "
        "first to start a new run store there"
    )
    assert not typo.parent.exists()
    # A new file in an existing folder is a new store, and said.
    new = tmp_path / "new.sqlite"
    proc = galapagos(
        "run", "-s", "topk", "-t", "circle_packing", "-i", "0", "--sandbox", "local",
        "--store", str(new),
    )  # fmt: skip
    assert proc.returncode == 0 and f"note: new run store {new}" in proc.stderr


@pytest.mark.slow
def test_tasks_lists_shipped_added_and_stored_tasks(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    mine = tmp_path / "mytasks"
    task_folder(mine, "spread3", GOOD)
    elsewhere = task_folder(tmp_path / "else", "loose3", GOOD)
    env = {"GALAPAGOS_TASKS": str(mine)}
    # GALAPAGOS_TASKS adds to the shipped tasks: both kinds run by name.
    for name in ("spread3", "circle_packing"):
        proc = galapagos(
            "run", "-s", "topk", "-t", name, "-i", "0", "--sandbox", "local", store=store, env=env
        )
        assert proc.returncode == 0, proc.stderr
    proc = galapagos(
        "run", "-s", "topk", "-t", str(elsewhere), "-i", "0", "--sandbox", "local", store=store
    )
    assert proc.returncode == 0, proc.stderr
    rows = {
        r["name"]: r for r in json.loads(galapagos("tasks", "--json", store=store, env=env).stdout)
    }
    assert rows["circle_packing"]["source"] == "shipped"
    assert rows["spread3"]["source"] == "GALAPAGOS_TASKS"
    assert rows["loose3"]["source"] == str(elsewhere)  # known only from a stored run
    assert (
        rows["loose3"]["best_stored_value"] == pytest.approx(0.2)
        and rows["loose3"]["stored_runs"] == 1
    )
    assert rows["spread3"]["best_stored_run"] is not None
    text = galapagos("tasks", store=store, env=env).stdout
    assert "loose3" in text and "GALAPAGOS_TASKS" in text


def test_task_check_names_the_file_that_does_not_parse(tmp_path: Path) -> None:
    folder = task_folder(tmp_path, "t_synerr", GOOD)
    evaluator = folder / "evaluator.py"
    evaluator.write_text(
        evaluator.read_text().replace("def evaluate(candidate):", "def evaluate(candidate)")
    )
    proc = galapagos("task", "check", str(folder), "--sandbox", "local", timeout=300)
    assert proc.returncode == 1
    files = next(line for line in proc.stdout.splitlines() if " files " in line)
    assert "the evaluator does not parse: expected ':' (evaluator.py, line" in files
    assert "<unknown>" not in proc.stdout


def test_a_bench_failure_line_is_cut_between_words_only(tmp_path: Path) -> None:
    # A message of a length that a cut at a fixed number of characters splits mid-word.
    broken = "def solve():\n    raise RuntimeError('seed broken')\n"
    folder = task_folder(tmp_path, "t_seedcrash", "return {}", seed=broken)
    proc = galapagos(
        "bench", "--name", "b", "--scaffolds", "topk", "--tasks", str(folder), "--seeds", "1",
        "--iterations", "1", "--set", "evaluator.sandbox=local", store=tmp_path / "s.sqlite",
        timeout=300,
    )  # fmt: skip
    assert proc.returncode == 1
    error = json.loads(galapagos("runs", "--json", store=tmp_path / "s.sqlite").stdout)[0]["error"]
    words = error.split()
    shown = [
        line for line in proc.stderr.splitlines() if "t_seedcrash" in line and "failed" in line
    ]
    assert shown
    for line in shown:
        text = line[line.index(" ".join(words[:4])) :]
        text = re.sub(r"\)?\s+\[[^\]]*\]$", "", text).removesuffix(" …")
        # What is shown is the error's first words, whole (never a word cut in two).
        assert " ".join(words).startswith(text) and text.split() == words[: len(text.split())]
    from harness.cli._output import clip

    assert clip("alpha beta gamma", 12) == "alpha …"
    assert clip("alpha beta", 40) == "alpha beta"


def test_usage_errors_are_one_line(tmp_path: Path) -> None:
    for args, message in [
        (("leaderboard", "--format", "xml"), "'xml' is not one of"),
        (("run", "--bogus"), "No such option: --bogus"),
    ]:
        proc = galapagos(*args, store=tmp_path / "s.sqlite")
        assert proc.returncode == 2
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]
        assert lines[0].endswith(f"(see galapagos {args[0]} --help)")
