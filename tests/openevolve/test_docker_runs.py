"""The ``openevolve`` scaffold end to end: the CLI, the offline model over HTTP, every candidate
and cascade stage in Docker.  100-iteration runs on circle_packing and on an OpenEvolve-format
folder (``fixtures/function_minimization``: its own ``config.yaml``, cascade with thresholds
``[0.5, 0.75]``) complete with migrations exactly when the generation counters say; a run
killed with SIGKILL and resumed ends identical to the uninterrupted one."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from harness.store.sqlite import SQLiteStore

ROOT = Path(__file__).resolve().parents[2]
FOLDER = Path(__file__).with_name("fixtures") / "function_minimization"
ITERATIONS = 100
INTERVAL = 10  # the card's 50 is never reached in 100 iterations over 5 islands
CIRCLES = [
    "--scaffold", "openevolve", "--task", "circle_packing", "--iterations", str(ITERATIONS),
    "--seed", "3", "--set", f"population.migration_interval={INTERVAL}",
]  # fmt: skip

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def env_for(store: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env["GALAPAGOS_STORE"] = str(store)
    return env


def galapagos(*args: str, store: Path) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "harness.cli", *args, "--json"],
        cwd=ROOT,
        env=env_for(store),
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


def lineage(store: Path, run_id: str) -> list[tuple[Any, ...]]:
    st = SQLiteStore(store)
    try:
        return [
            (p.id, p.iteration, p.parent_id, p.code, json.dumps(dict(p.metrics), sort_keys=True))
            for p in st.programs(run_id)
        ]
    finally:
        st.close()


def events(store: Path, run_id: str, kind: str) -> list[tuple[int, dict[str, Any]]]:
    st = SQLiteStore(store)
    try:
        return [(e.iteration, dict(e.payload)) for e in st.events(run_id, [kind])]
    finally:
        st.close()


def assert_migrations_on_schedule(store: Path, run_id: str, islands: int = 5) -> None:
    """Replay the generation counters from the admissions: a migration happens exactly at the
    iterations where the leading island is ``INTERVAL`` generations past the last one."""
    admitted = {it for it, p in events(store, run_id, "admit") if it > 0 and p["admitted"]}
    generations, last, expected = [0] * islands, 0, []
    for iteration in range(1, ITERATIONS + 1):
        if iteration in admitted:
            generations[(iteration - 1) % islands] += 1
            if max(generations) - last >= INTERVAL:
                last = max(generations)
                expected.append((iteration, last))
    migrations = events(store, run_id, "migration")
    assert [(it, p["generation"]) for it, p in migrations] == expected
    assert len(expected) >= 1
    assert any("copy" in move for _, p in migrations for move in p["moves"])
    selects = events(store, run_id, "select")
    assert [it for it, _ in selects] == list(range(1, ITERATIONS + 1))
    for it, payload in selects:
        assert payload["info"]["island"] == (it - 1) % islands
        assert payload["info"]["tier"] in ("exploration", "exploitation", "weighted", "random")


@pytest.fixture(scope="module")
def circles(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    store = tmp_path_factory.mktemp("oe") / "ref.sqlite"
    return store, galapagos("run", *CIRCLES, store=store)


def test_circle_packing_100_iterations_migrate_on_schedule(
    circles: tuple[Path, dict[str, Any]],
) -> None:
    store, summary = circles
    assert summary["status"] == "completed"
    assert summary["iterations_done"] == ITERATIONS
    assert summary["best_score"] >= summary["seed_score"]
    assert_migrations_on_schedule(store, summary["run_id"])


def test_compat_folder_100_iterations_with_cascade(tmp_path: Path) -> None:
    store = tmp_path / "fm.sqlite"
    summary = galapagos(
        "run", "--scaffold", "openevolve", "--task", str(FOLDER),
        "--iterations", str(ITERATIONS), "--seed", "5",
        "--set", f"population.migration_interval={INTERVAL}", store=store,
    )  # fmt: skip
    assert summary["status"] == "completed"
    assert summary["iterations_done"] == ITERATIONS
    assert_migrations_on_schedule(store, summary["run_id"])
    st = SQLiteStore(store)
    try:
        rows = st.evaluations(summary["run_id"])
    finally:
        st.close()
    stages = [r["result"]["stages"] for r in rows]
    ran = [tuple(s["stage"] for s in run) for run in stages]
    assert ("evaluate_stage1", "evaluate_stage2") in ran  # the cascade went on past stage 1
    for run in stages:  # and only past a stage that cleared the folder's threshold 0.5
        if len(run) == 2:
            assert run[0]["score"] >= 0.5


def test_sigkill_then_resume_ends_identical(
    circles: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    ref_store, reference = circles
    killed_store = tmp_path / "killed.sqlite"
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "run", *CIRCLES],
        cwd=ROOT,
        env=env_for(killed_store),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    run_id = None
    deadline = time.monotonic() + 1200
    try:
        while time.monotonic() < deadline:
            if killed_store.exists():
                st = SQLiteStore(killed_store)
                runs = st.list_runs()
                done = runs[0].iterations_done if runs else 0
                st.close()
                if runs and done >= 37:  # past the first migration (generation 10 of island 0)
                    run_id = runs[0].id
                    break
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            time.sleep(0.05)
        assert run_id is not None, "the run never reached iteration 37"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    st = SQLiteStore(killed_store)
    partial = st.get_run(run_id)
    st.close()
    assert 37 <= partial.iterations_done < ITERATIONS
    resumed = galapagos("resume", run_id, store=killed_store)
    assert resumed["status"] == "completed"
    assert resumed["iterations_done"] == ITERATIONS
    assert lineage(killed_store, run_id) == lineage(ref_store, reference["run_id"])
    assert resumed["best_score"] == reference["best_score"]
    ours = events(killed_store, run_id, "migration")
    assert ours == events(ref_store, reference["run_id"], "migration")
