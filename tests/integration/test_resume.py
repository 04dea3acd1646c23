"""End to end through the CLI, the offline model over HTTP and the Docker sandbox: a run is a
pure function of its seed, and a run killed with SIGKILL mid-iteration resumes to exactly the
run that was never interrupted."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.store.sqlite import SQLiteStore
from tests.integration.helpers import kill_after, lineage, run_json

ARGS = ["--scaffold", "best_of_n", "--task", "circle_packing", "--iterations", "8", "--seed", "7"]

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_same_seed_same_lineage(tmp_path: Path) -> None:
    a = run_json("run", *ARGS, store=tmp_path / "a.sqlite")
    b = run_json("run", *ARGS, store=tmp_path / "b.sqlite")
    assert a["status"] == b["status"] == "completed"
    assert lineage(tmp_path / "a.sqlite", a["run_id"]) == lineage(
        tmp_path / "b.sqlite", b["run_id"]
    )
    other = run_json("run", *ARGS[:-1], "8", store=tmp_path / "c.sqlite")
    assert lineage(tmp_path / "c.sqlite", other["run_id"]) != lineage(
        tmp_path / "a.sqlite", a["run_id"]
    )


def test_sigkill_mid_iteration_then_resume_matches_uninterrupted(tmp_path: Path) -> None:
    reference = run_json("run", *ARGS, store=tmp_path / "ref.sqlite")
    killed_store = tmp_path / "killed.sqlite"
    # Iteration 3 is committed, so iteration 4 (LLM call + sandboxed evaluation, hundreds of
    # milliseconds) is in flight when the kill lands.
    run_id = kill_after(ARGS, killed_store, 3, timeout=300)
    st = SQLiteStore(killed_store)
    partial = st.get_run(run_id)
    st.close()
    assert 3 <= partial.iterations_done < 8
    resumed = run_json("resume", run_id, store=killed_store)
    assert resumed["status"] == "completed"
    assert resumed["iterations_done"] == 8
    assert lineage(killed_store, run_id) == lineage(tmp_path / "ref.sqlite", reference["run_id"])
    assert resumed["best_score"] == reference["best_score"]
