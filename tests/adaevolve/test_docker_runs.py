"""adaevolve end to end through the CLI, the offline model over HTTP and the Docker sandbox:
100-iteration runs on three tasks, one of them made to stagnate early so that islands spawn and
paradigms are installed; and a run killed with SIGKILL mid-iteration resumes to exactly the run
that was never interrupted."""

from __future__ import annotations

import collections
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.store.sqlite import SQLiteStore
from tests.integration.test_resume import ROOT, env_for, galapagos, lineage

pytestmark = [pytest.mark.docker, pytest.mark.slow]

#: Early stagnation: spawn when fewer than 30% of evaluations improved, every 20 iterations at
#: most (the defaults, 1.5% and 30, rarely trigger within 100 offline iterations).
STAGNANT = [
    "--set",
    "selection_policy.spawn_productivity_threshold=0.3",
    "--set",
    "selection_policy.spawn_cooldown_iterations=20",
]


def event_counts(store: Path, run_id: str) -> collections.Counter[str]:
    st = SQLiteStore(store)
    try:
        return collections.Counter(e.kind for e in st.events(run_id))
    finally:
        st.close()


@pytest.mark.parametrize(
    ("task", "extra"),
    [("circle_packing", STAGNANT), ("function_minimization", []), ("heilbronn_triangle", [])],
)
def test_hundred_offline_iterations_complete(tmp_path: Path, task: str, extra: list[str]) -> None:
    store = tmp_path / "s.sqlite"
    args = ["--scaffold", "adaevolve", "--task", task, "--iterations", "100", "--seed", "1"]
    summary = galapagos("run", *args, *extra, store=store)
    assert summary["status"] == "completed"
    assert summary["iterations_done"] == 100
    assert summary["best_score"] >= summary["seed_score"]
    kinds = event_counts(store, summary["run_id"])
    assert kinds["island_chosen"] == 100  # end-of-iteration bookkeeping on every iteration
    assert kinds["select"] >= 100
    assert kinds["migration"] == 100 // 15
    if extra:
        assert kinds["island_spawned"] >= 1
        assert kinds["paradigm_installed"] >= 1


RESUME = [
    "--scaffold", "adaevolve", "--task", "circle_packing", "--iterations", "30", "--seed", "3",
    "--set", "selection_policy.spawn_productivity_threshold=0.6",
    "--set", "selection_policy.spawn_cooldown_iterations=5",
    "--set", "selection_policy.migration_interval=4",
    "--set", "memory.paradigm_window_size=4",
    "--set", "memory.paradigm_improvement_threshold=0.5",
]  # fmt: skip


def test_sigkill_mid_run_then_resume_matches_uninterrupted(tmp_path: Path) -> None:
    reference = galapagos("run", *RESUME, store=tmp_path / "ref.sqlite")
    kinds = event_counts(tmp_path / "ref.sqlite", reference["run_id"])
    assert kinds["island_spawned"] and kinds["paradigm_installed"] and kinds["migration"]
    killed = tmp_path / "killed.sqlite"
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "run", *RESUME],
        cwd=ROOT,
        env=env_for(killed),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    run_id = None
    deadline = time.monotonic() + 600
    try:
        while time.monotonic() < deadline:
            if killed.exists():
                st = SQLiteStore(killed)
                runs = st.list_runs()
                st.close()
                # Past a spawn, a migration and a paradigm install (iterations 5-12 here).
                if runs and runs[0].iterations_done >= 14:
                    run_id = runs[0].id
                    break
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            time.sleep(0.05)
        assert run_id is not None, "the run never reached iteration 14"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    st = SQLiteStore(killed)
    partial = st.get_run(run_id)
    st.close()
    assert 14 <= partial.iterations_done < 30
    resumed = galapagos("resume", run_id, store=killed)
    assert resumed["status"] == "completed"
    assert resumed["iterations_done"] == 30
    assert lineage(killed, run_id) == lineage(tmp_path / "ref.sqlite", reference["run_id"])
    assert resumed["best_score"] == reference["best_score"]
    assert event_counts(killed, run_id) == kinds
