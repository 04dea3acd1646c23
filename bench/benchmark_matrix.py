"""The benchmark matrix two ways: one ``galapagos bench`` against one ``galapagos run`` per cell.

For the shipped scaffolds × tasks × seeds (default: every shipped scaffold, every task, 1 seed,
10 iterations, the offline model, the Docker sandbox) this runs

1. ``galapagos bench --name matrix … --parallel P --json`` in one subprocess, and
2. the same cells one ``galapagos run --scaffold S --task T --seed K --iterations N`` after
   another,

each into its own temporary store, and prints per way: wall time, evaluations (read from the
store) and evaluations per second, and the containers the Docker engine created meanwhile
(``create`` events in the window, every container: evaluations, warm-pool spares, canaries,
EvoX strategy containers).  It also counts the cells whose best score, and whose every program
(code, parent, score), is the same both ways (the offline model is deterministic, so all of
them should be; a differing cell is named).  Figures only, no assertion; other users of the
engine during the measurement inflate the container counts.

    .venv/bin/python bench/benchmark_matrix.py [--iterations 10] [--seeds 1] [--parallel 2]
        [--scaffolds a,b] [--tasks x,y|all] [--runs-first] [--keep DIR] [--json]

Measured on 2026-11-26 (2 CPUs, nothing else running), the 6 shipped scaffolds × 11 tasks ×
1 seed × 10 iterations, 728 evaluations each way: ``bench --parallel 2`` 285.4 s (2.55
evaluations/s, 1131 containers) against one run after another 457.7 s (1.59/s, 1505
containers); all 66 cells had the same programs (code, parent, score) both ways.  Before the
sandbox stopped naming its directory in tracebacks (it carried the candidate process's pid, and
the retry prompt shows the traceback) one EvoX cell differed.  On 2 busy cores the wall times
follow the outside load more than the method: an earlier measurement under heavy load gave the
opposite order.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import docker

from harness.core.registry import list_scaffolds
from harness.evaluation.task import list_tasks
from harness.sandbox.ownership import OWNER_LABEL
from harness.store.sqlite import SQLiteStore

ROOT = Path(__file__).resolve().parents[1]


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "GALAPAGOS_"))}


class Creates:
    """Container ``create`` events, live, by the pid in their ``galapagos.owner`` label (the
    engine's event history is too short to ask afterwards, and other users of the engine
    create containers too: only our subprocesses' count)."""

    def __init__(self, client: docker.DockerClient) -> None:
        self.by_pid: dict[int, int] = {}
        self._stream = client.events(decode=True, filters={"type": "container", "event": "create"})
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            for event in self._stream:
                owner = (event.get("Actor", {}).get("Attributes") or {}).get(OWNER_LABEL, "")
                parts = owner.split("/")
                if len(parts) == 4 and parts[2].isdigit():
                    pid = int(parts[2])
                    self.by_pid[pid] = self.by_pid.get(pid, 0) + 1
        except Exception:  # noqa: BLE001 - the stream closes with an error on close()
            return

    def count(self, pids: list[int]) -> int:
        time.sleep(1.0)  # let the last events arrive
        return sum(self.by_pid.get(pid, 0) for pid in pids)

    def close(self) -> None:
        self._stream.close()


def _cli(*args: str, pids: list[int]) -> subprocess.CompletedProcess[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", *args],
        cwd=ROOT,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    pids.append(proc.pid)
    out, err = proc.communicate()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _per_scaffold(store: Path) -> dict[str, float]:
    """Seconds each scaffold's runs took, summed (run created → last update)."""
    st = SQLiteStore(store)
    out: dict[str, float] = {}
    for r in st.list_runs():
        out[r.scaffold] = round(out.get(r.scaffold, 0.0) + (r.updated_at - r.created_at), 1)
    return out


def _best(store: Path) -> dict[tuple[str, str, int], float | None]:
    st = SQLiteStore(store)
    return {(r.scaffold, r.task, r.seed): r.best_score for r in st.list_runs()}


def _programs(store: Path) -> dict[tuple[str, str, int], list[tuple[Any, ...]]]:
    """Every cell's programs: id, parent, code and score, in order."""
    st = SQLiteStore(store)
    return {
        (r.scaffold, r.task, r.seed): [
            (p.id, p.parent_id, p.code, p.score) for p in st.programs(r.id)
        ]
        for r in st.list_runs()
    }


def _evaluations(store: Path) -> int:
    st = SQLiteStore(store)
    return sum(st.evaluation_count(r.id) for r in st.list_runs())


def measure(
    scaffolds: list[str],
    tasks: list[str],
    seeds: int,
    iterations: int,
    parallel: int,
    *,
    runs_first: bool = False,
    keep: Path | None = None,
) -> dict[str, Any]:
    client = docker.from_env()
    creates = Creates(client)
    out: dict[str, Any] = {
        "cells": len(scaffolds) * len(tasks) * seeds,
        "scaffolds": scaffolds,
        "tasks": tasks,
        "seeds": seeds,
        "iterations": iterations,
        "parallel": parallel,
        "cpus": os.cpu_count(),
        "order": "runs first" if runs_first else "bench first",
    }
    with tempfile.TemporaryDirectory() as tmp:
        folder = keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        bench_store, runs_store = folder / "bench.sqlite", folder / "runs.sqlite"

        def bench() -> None:
            pids: list[int] = []
            load, t0 = os.getloadavg()[0], time.time()
            proc = _cli("bench", "--name", "matrix", "--scaffolds", ",".join(scaffolds),
                        "--tasks", ",".join(tasks), "--seeds", str(seeds), "--iterations",
                        str(iterations), "--parallel", str(parallel), "--json",
                        "--store", str(bench_store), pids=pids)  # fmt: skip
            t1 = time.time()
            summary = json.loads(proc.stdout) if proc.stdout.strip() else {}
            evals = _evaluations(bench_store)
            out["bench"] = {
                "exit": proc.returncode,
                "wall_s": t1 - t0,
                "evaluations": evals,
                "evaluations_per_s": evals / (t1 - t0),
                "containers_created": creates.count(pids),
                "status": summary.get("status"),
                "load_before_after": (load, os.getloadavg()[0]),
                "run_seconds_by_scaffold": _per_scaffold(bench_store),
            }

        def sequential() -> None:
            pids: list[int] = []
            failures: list[str] = []
            load, t0 = os.getloadavg()[0], time.time()
            for scaffold in scaffolds:
                for task in tasks:
                    for seed in range(seeds):
                        run = _cli("run", "--scaffold", scaffold, "--task", task, "--seed",
                                   str(seed), "--iterations", str(iterations), "--json",
                                   "--quiet", "--store", str(runs_store), pids=pids)  # fmt: skip
                        if run.returncode != 0:
                            failures.append(f"{scaffold} × {task} × {seed}: exit {run.returncode}")
            t1 = time.time()
            evals = _evaluations(runs_store)
            out["sequential_runs"] = {
                "wall_s": t1 - t0,
                "evaluations": evals,
                "evaluations_per_s": evals / (t1 - t0),
                "containers_created": creates.count(pids),
                "nonzero_exits": failures,
                "load_before_after": (load, os.getloadavg()[0]),
                "run_seconds_by_scaffold": _per_scaffold(runs_store),
            }

        for phase in (sequential, bench) if runs_first else (bench, sequential):
            phase()
        creates.close()
        a, b = _best(bench_store), _best(runs_store)
        out["same_best_score"] = sum(1 for key, value in a.items() if b.get(key) == value)
        pa, pb = _programs(bench_store), _programs(runs_store)
        out["same_programs"] = sum(1 for key, value in pa.items() if pb.get(key) == value)
        out["different_best_score"] = [
            {"cell": " × ".join(map(str, key)), "bench": value, "run": b.get(key)}
            for key, value in sorted(a.items())
            if b.get(key) != value
        ]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--scaffolds", default=",".join(list_scaffolds()))
    parser.add_argument("--tasks", default="all")
    parser.add_argument("--runs-first", action="store_true", help="one run at a time first")
    parser.add_argument("--keep", type=Path, help="keep both stores in this folder")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    tasks = list_tasks() if args.tasks == "all" else args.tasks.split(",")
    result = measure(
        args.scaffolds.split(","),
        tasks,
        args.seeds,
        args.iterations,
        args.parallel,
        runs_first=args.runs_first,
        keep=args.keep,
    )
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(
        f"{result['cells']} cells ({len(result['scaffolds'])} scaffolds × {len(tasks)} tasks × "
        f"{args.seeds} seed(s)), {args.iterations} iterations, offline model, {result['cpus']} "
        f"CPUs; bench --parallel {args.parallel}"
    )
    print(f"{'':18}{'wall s':>9}{'evals':>8}{'evals/s':>9}{'containers':>12}")
    for label, key in (("galapagos bench", "bench"), ("one run at a time", "sequential_runs")):
        r = result[key]
        print(
            f"{label:18}{r['wall_s']:9.1f}{r['evaluations']:8d}{r['evaluations_per_s']:9.2f}"
            f"{r['containers_created']:12d}"
        )
    print(f"bench exit {result['bench']['exit']}, cells {result['bench']['status']}")
    print(f"cells with the same best score both ways: {result['same_best_score']}")
    print(
        f"cells with the same programs (code, parent, score) both ways: {result['same_programs']}"
    )
    for d in result["different_best_score"]:
        print(f"  differs: {d['cell']}: bench {d['bench']}, run {d['run']}")
    for key in ("bench", "sequential_runs"):
        r = result[key]
        by = r["run_seconds_by_scaffold"]
        print(f"{key}: load average {r['load_before_after']}, run seconds by scaffold {by}")
    for line in result["sequential_runs"]["nonzero_exits"]:
        print(f"  run: {line}")


if __name__ == "__main__":
    main()
