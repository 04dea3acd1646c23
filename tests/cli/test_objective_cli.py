"""The objective is what the card says, a broken evaluator stops the search, a failed seed is
said once and is nobody's best.  End to end through ``galapagos run``, offline model; the
breaker runs in Docker (the traceback it reads is the container's)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.helpers import galapagos
from tests.cli.results_helpers import compat_folder, task_folder

NO_COMBINED = "return {'min_dist': min_dist(xs), 'eval_time': 0.5}"


def run(store: Path, task: Path, *extra: str, sandbox: str = "local") -> tuple[int, dict, str]:
    proc = galapagos(
        "run", "-s", "topk", "-t", str(task), "--sandbox", sandbox, "--json", *extra,
        store=store, timeout=600,
    )  # fmt: skip
    return proc.returncode, json.loads(proc.stdout) if proc.stdout.strip() else {}, proc.stderr


def test_a_native_task_is_scored_by_its_cards_metric_in_its_direction(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    up = task_folder(tmp_path, "t_nocs", NO_COMBINED)
    code, data, err = run(store, up, "-i", "1")
    assert code == 0, err
    assert data["seed_score"] == pytest.approx(0.2)  # min_dist of 0.1/0.3/0.6, not the mean
    assert "the score is the mean" not in err
    down = task_folder(tmp_path, "t_down", NO_COMBINED, direction="minimize")
    code, data, err = run(store, down, "-i", "1")
    assert code == 0, err
    assert data["seed_score"] == pytest.approx(-0.2)  # minimised: higher score is lower metric


def test_a_result_without_the_objective_stops_before_any_llm_call(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    folder = task_folder(tmp_path, "t_none", "return {'spread': min_dist(xs), 'eval_time': 0.5}")
    code, data, err = run(store, folder, "-i", "3")
    assert code == 1
    lines = [line for line in err.splitlines() if line.startswith(("error:", "warning:"))]
    assert lines == [
        "error: the seed program's result has no objective: no numeric combined_score and no "
        "'min_dist' (the card's metric); its numeric metrics: eval_time, spread; no LLM call was "
        "made. Make the evaluator return combined_score or the card's metric (galapagos task "
        "check shows what it returns)"
    ]
    assert data["tokens"] == 0 and data["status"] == "failed" and data["best_score"] is None


def test_a_compat_folder_keeps_the_average_and_says_so_once(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    code, data, err = run(store, compat_folder(tmp_path, "oe_two"), "-i", "2")
    assert code == 0, err
    assert data["seed_score"] == pytest.approx((0.2 + 0.5) / 2)  # the references' rule
    notes = [line for line in err.splitlines() if "the score is the mean of" in line]
    assert notes == [
        "note: the evaluator returns no combined_score: the score is the mean of quality, speed "
        "(the OpenEvolve/SkyDiscover rule for a folder without a task.yaml); return "
        "combined_score to choose the objective"
    ]


def test_a_failed_seed_is_said_once_and_is_nobodys_best(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    broken = "def solve():\n    raise RuntimeError('seed is broken')\n"
    folder = task_folder(tmp_path, "t_seedcrash", "return {}", seed=broken)
    proc = galapagos(
        "run", "-s", "topk", "-t", str(folder), "-i", "2", "--sandbox", "local", store=store
    )
    assert proc.returncode == 1
    assert proc.stderr.count("seed is broken") == 1, proc.stderr
    summary = next(line for line in proc.stdout.splitlines() if line.startswith("run "))
    assert "seed score - -> no best program" in summary and "best 0" not in summary
    listed = json.loads(galapagos("runs", "--json", store=store).stdout)
    assert listed[0]["best_score"] is None and listed[0]["best_program_id"] is None
    tasks = {t["name"]: t for t in json.loads(galapagos("tasks", "--json", store=store).stdout)}
    assert tasks["t_seedcrash"]["best_stored_run"] is None  # a failed run is never the best


EVBUG = """\
if xs != [0.1, 0.3, 0.6]:
    raise KeyError('evaluator bug')
return {'combined_score': min_dist(xs), 'validity': 1.0, 'min_dist': min_dist(xs)}"""


@pytest.mark.docker
@pytest.mark.slow
def test_a_broken_evaluator_stops_the_run_with_one_line(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    folder = task_folder(tmp_path, "t_evbug", EVBUG)
    code, data, err = run(store, folder, "-i", "8", sandbox="docker")
    assert code == 1, err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1
    assert errors[0].startswith(
        "error: the task's evaluator failed the same way on 5 consecutive candidates (KeyError "
        "at evaluator.py line 9: 'evaluator bug'); it looks broken, so the run stopped after "
        f"{data['tokens']} tokens."
    )
    assert data["status"] == "failed" and data["iterations_done"] == 5 and data["tokens"] > 0
    # --keep-going searches anyway (here in the local sandbox: the same evaluator).
    code, data, err = run(store, folder, "-i", "6", "--keep-going")
    assert data["status"] == "completed" and data["iterations_done"] == 6, err
