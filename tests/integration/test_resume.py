"""End to end through the CLI, the offline model over HTTP and the Docker sandbox: a run is a
pure function of its seed, and a run killed with SIGKILL mid-iteration resumes to exactly the
run that was never interrupted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.store.sqlite import SQLiteStore

ROOT = Path(__file__).resolve().parents[2]
ARGS = ["--scaffold", "best_of_n", "--task", "circle_packing", "--iterations", "8", "--seed", "7"]

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def env_for(store: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env["GALAPAGOS_STORE"] = str(store)
    return env


def galapagos(*args: str, store: Path) -> dict:
    proc = subprocess.run(
        [sys.executable, "-m", "harness.cli", *args, "--json"],
        cwd=ROOT,
        env=env_for(store),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def lineage(store: Path, run_id: str) -> list[tuple]:
    st = SQLiteStore(store)
    try:
        return [
            (p.id, p.iteration, p.parent_id, p.code, json.dumps(dict(p.metrics), sort_keys=True))
            for p in st.programs(run_id)
        ]
    finally:
        st.close()


def test_same_seed_same_lineage(tmp_path: Path) -> None:
    a = galapagos("run", *ARGS, store=tmp_path / "a.sqlite")
    b = galapagos("run", *ARGS, store=tmp_path / "b.sqlite")
    assert a["status"] == b["status"] == "completed"
    assert lineage(tmp_path / "a.sqlite", a["run_id"]) == lineage(
        tmp_path / "b.sqlite", b["run_id"]
    )
    other = galapagos("run", *ARGS[:-1], "8", store=tmp_path / "c.sqlite")
    assert lineage(tmp_path / "c.sqlite", other["run_id"]) != lineage(
        tmp_path / "a.sqlite", a["run_id"]
    )


def test_sigkill_mid_iteration_then_resume_matches_uninterrupted(tmp_path: Path) -> None:
    reference = galapagos("run", *ARGS, store=tmp_path / "ref.sqlite")
    killed_store = tmp_path / "killed.sqlite"
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "run", *ARGS],
        cwd=ROOT,
        env=env_for(killed_store),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    run_id = None
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline:
            if killed_store.exists():
                st = SQLiteStore(killed_store)
                runs = st.list_runs()
                done = runs[0].iterations_done if runs else 0
                st.close()
                # Iteration 3 is committed, so iteration 4 (LLM call + sandboxed evaluation,
                # hundreds of milliseconds) is in flight when the kill lands.
                if runs and done >= 3:
                    run_id = runs[0].id
                    break
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            time.sleep(0.05)
        assert run_id is not None, "the run never reached iteration 3"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    st = SQLiteStore(killed_store)
    partial = st.get_run(run_id)
    st.close()
    assert 3 <= partial.iterations_done < 8
    resumed = galapagos("resume", run_id, store=killed_store)
    assert resumed["status"] == "completed"
    assert resumed["iterations_done"] == 8
    assert lineage(killed_store, run_id) == lineage(tmp_path / "ref.sqlite", reference["run_id"])
    assert resumed["best_score"] == reference["best_score"]
