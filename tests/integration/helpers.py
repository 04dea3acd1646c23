"""End-to-end runs through the real ``galapagos`` command: JSON summaries, what a run stored,
and a run killed with SIGKILL mid-run (shared by the resume tests of every scaffold)."""

from __future__ import annotations

import collections
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from harness.store.sqlite import SQLiteStore
from tests.cli.helpers import ROOT, cli_env, galapagos


def run_json(*args: str, store: Path, timeout: float = 1800) -> dict[str, Any]:
    """``galapagos ARGS --json`` against ``store``; it must succeed.  Its summary."""
    proc = galapagos(*args, "--json", store=store, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


def lineage(store: Path, run_id: str) -> list[tuple[Any, ...]]:
    """Every program of the run: id, iteration, parent, code and metrics."""
    st = SQLiteStore(store)
    try:
        return [
            (p.id, p.iteration, p.parent_id, p.code, json.dumps(dict(p.metrics), sort_keys=True))
            for p in st.programs(run_id)
        ]
    finally:
        st.close()


def events(store: Path, run_id: str, kind: str) -> list[tuple[int, dict[str, Any]]]:
    """(iteration, payload) of the run's events of one kind, in order."""
    st = SQLiteStore(store)
    try:
        return [(e.iteration, dict(e.payload)) for e in st.events(run_id, [kind])]
    finally:
        st.close()


def event_counts(store: Path, run_id: str) -> collections.Counter[str]:
    """How many events of each kind the run recorded."""
    st = SQLiteStore(store)
    try:
        return collections.Counter(e.kind for e in st.events(run_id))
    finally:
        st.close()


def kill_after(args: list[str], store: Path, iterations: int, timeout: float) -> str:
    """Start ``galapagos run ARGS`` against ``store``, SIGKILL it once ``iterations`` are
    committed (the next one is then in flight), and return the run's id."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "run", *args],
        cwd=ROOT,
        env=cli_env(store),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    run_id = None
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if store.exists():
                st = SQLiteStore(store)
                runs = st.list_runs()
                st.close()
                if runs and runs[0].iterations_done >= iterations:
                    run_id = runs[0].id
                    break
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            time.sleep(0.05)
        assert run_id is not None, f"the run never reached iteration {iterations}"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        if proc.stderr:
            proc.stderr.close()
    return run_id
