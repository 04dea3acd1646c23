"""Does ``best_of_n`` with the offline model improve on each shipped task's seed?  Prints a table.

The acceptance figure of the task suite: ``galapagos run --scaffold best_of_n --task T
--iterations 20`` improves on the seed for at least 6 of the tasks with the offline model.  For
every shipped task (or those named), this runs exactly that command in a subprocess, in the Docker
sandbox, with a fixed ``--seed``, into a temporary ``--store``, with ``--json``, and with every
``OPENAI_*`` variable removed so the offline mutation model answers.  "Improved" means the best
score is strictly above the seed's; the ``gain`` column (relative, in percent) shows when that
is only float noise.  The ``failed`` column counts LLM attempts whose child was unusable or
failed its evaluation, read from the run's stored events.  Figures only, never an assertion;
runs are sequential so the wall times do not compete.

    .venv/bin/python bench/task_suite_runs.py [--iterations 20] [--seed 0] [--json] [TASK ...]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from harness.evaluation.task import tasks_root
from harness.store.sqlite import SQLiteStore

#: The acceptance figure: at least this many tasks improve on their seed.
TARGET = 6


@dataclass(frozen=True)
class Row:
    task: str
    run_id: str
    status: str
    seed_score: float | None
    best_score: float | None
    improved: bool
    iterations: int
    max_iterations: int
    attempts: dict[str, int]
    wall_s: float
    error: str = ""


def galapagos_command() -> list[str]:
    """The ``galapagos`` console script of this interpreter's environment."""
    script = Path(sys.executable).with_name("galapagos")
    if script.exists():
        return [str(script)]
    found = shutil.which("galapagos")
    return [found] if found else [sys.executable, "-m", "harness.cli"]


def offline_env() -> dict[str, str]:
    """The environment minus anything that would point the run at a real endpoint."""
    return {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}


def run_task(task: str, args: argparse.Namespace, store: Path) -> Row:
    cmd = [
        *galapagos_command(),
        "run",
        "--scaffold",
        args.scaffold,
        "--task",
        task,
        "--iterations",
        str(args.iterations),
        "--seed",
        str(args.seed),
        "--sandbox",
        "docker",
        "--store",
        str(store),
        "--json",
    ]
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=offline_env(), check=False)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or [f"exit {proc.returncode}"]
        return Row(task, "", "error", None, None, False, 0, args.iterations, {}, wall, tail[0])
    if "offline mutation model" not in proc.stderr:
        raise SystemExit(f"{task}: the run did not use the offline model:\n{proc.stderr}")
    summary: dict[str, Any] = json.loads(proc.stdout)
    seed, best = summary["seed_score"], summary["best_score"]
    events = SQLiteStore(store).events(summary["run_id"], kinds=["attempt"])
    outcomes = Counter(str(e.payload.get("outcome", "?")) for e in events)
    return Row(
        task=task,
        run_id=summary["run_id"],
        status=summary["status"],
        seed_score=seed,
        best_score=best,
        improved=seed is not None and best is not None and best > seed,
        iterations=summary["iterations_done"],
        max_iterations=summary["max_iterations"],
        attempts=dict(outcomes),
        wall_s=wall,
        error=summary.get("error") or "",
    )


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.6f}"


#: A relative gain below this is reported as float noise, not progress (it still counts as
#: "improved", which is what the acceptance figure says).
NOISE = 1e-4


def _relative_gain(row: Row) -> float | None:
    if row.seed_score is None or row.best_score is None or row.seed_score == 0:
        return None
    return (row.best_score - row.seed_score) / abs(row.seed_score)


def _gain(row: Row) -> str:
    """Relative gain of the best over the seed, in percent (shows float-noise "improvements")."""
    gain = _relative_gain(row)
    if gain is None:
        return "-"
    return f"{100 * gain:+.2f}%" if abs(gain) >= NOISE else f"{100 * gain:+.1e}%"


def print_table(rows: list[Row]) -> None:
    head = (
        f"{'task':24} {'seed score':>11} {'best score':>11} {'gain':>10} {'improved':>8} "
        f"{'iterations':>10} {'failed':>6} {'wall s':>7}"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        failed = sum(n for outcome, n in r.attempts.items() if outcome != "ok")
        iterations = f"{r.iterations}/{r.max_iterations}"
        print(
            f"{r.task:24} {_score(r.seed_score):>11} {_score(r.best_score):>11} "
            f"{_gain(r):>10} {'yes' if r.improved else 'no':>8} {iterations:>10} "
            f"{failed:>6} {r.wall_s:7.1f}" + (f"  {r.status}: {r.error}" if r.error else ""),
            flush=True,
        )
    improved = sum(r.improved for r in rows)
    clear = sum((_relative_gain(r) or 0.0) >= NOISE for r in rows)
    verdict = "meets" if improved >= TARGET else "misses"
    print(
        f"\nimproved on the seed: {improved} of {len(rows)} tasks ({verdict} the target {TARGET})"
    )
    print(f"of which by at least {100 * NOISE:g}% (more than float noise): {clear}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks", nargs="*", help="task names (default: every shipped task)")
    parser.add_argument("--scaffold", default="best_of_n")
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0, help="the run seed (fixed: reproducible)")
    parser.add_argument("--store", type=Path, help="keep the runs in this store (default: temp)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON instead")
    args = parser.parse_args()
    names = args.tasks or sorted(p.parent.name for p in tasks_root().glob("*/task.yaml"))
    with tempfile.TemporaryDirectory(prefix="galapagos-suite-") as tmp:
        store = args.store or Path(tmp) / "store.sqlite"
        rows = []
        for name in names:
            row = run_task(name, args, store)
            rows.append(row)
            if not args.json:
                print(f"  {name}: {row.run_id or row.error} ({row.wall_s:.0f} s)", file=sys.stderr)
        if args.json:
            print(json.dumps([asdict(r) for r in rows], indent=2))
        else:
            print_table(rows)
            print(f"store: {store}" + (" (deleted)" if args.store is None else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
