"""Can the offline model improve each shipped task's seed?  Prints seed → best per task.

A greedy loop of the offline model's own mutation operator (numeric-literal perturbation,
``harness.llm.offline.mutation.mutate``): mutate the best program so far, score the child with
the task's trusted evaluator, keep it if it scores strictly higher.  Programs run in this process
through the sandbox's plain-data codec (the seeds are trusted here; the point is the scores, not
isolation).  Figures only, never an assertion.

    .venv/bin/python bench/task_improvability.py [--steps 20] [--seeds 5] [TASK ...]
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import statistics
import sys
import time
from pathlib import Path
from types import ModuleType

import harness.sandbox  # noqa: F401  (puts galapagos_sandbox on sys.path)
from harness.core.scoring import get_score, is_failure
from harness.evaluation.task import load_task, tasks_root
from harness.llm.offline.mutation import mutate


def load_evaluator(folder: Path, module: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{folder.name}_{module}", folder / module)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def score(evaluator: ModuleType, function: str, source: str) -> float:
    # Imported here: galapagos_sandbox is importable only once harness.sandbox has run.
    from galapagos_sandbox.testing import InProcessCandidate

    try:
        metrics = getattr(evaluator, function)(InProcessCandidate(source))
    except Exception:  # a broken mutant scores nothing, like a failed evaluation
        return 0.0
    return 0.0 if is_failure(metrics) else get_score(metrics)


def greedy(evaluator: ModuleType, function: str, seed_code: str, steps: int, seed: int) -> float:
    rng = random.Random(seed)
    best_code, best = seed_code, score(evaluator, function, seed_code)
    for _ in range(steps):
        child, changes = mutate(best_code, rng)
        if not changes:
            continue
        value = score(evaluator, function, child)
        if value > best:
            best_code, best = child, value
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks", nargs="*")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    names = args.tasks or sorted(p.parent.name for p in tasks_root().glob("*/task.yaml"))
    print(f"{'task':24} {'seed':>8} {'median best':>12} {'min':>8} {'max':>8}  {'s/eval':>6}")
    for name in names:
        task = load_task(name)
        evaluator = load_evaluator(task.path, task.card.evaluator)
        function = task.card.stages[-1].function
        assert task.initial_program is not None
        started = time.perf_counter()
        base = score(evaluator, function, task.initial_program)
        per_eval = time.perf_counter() - started
        bests = [
            greedy(evaluator, function, task.initial_program, args.steps, s)
            for s in range(args.seeds)
        ]
        print(
            f"{name:24} {base:8.4f} {statistics.median(bests):12.4f} {min(bests):8.4f} "
            f"{max(bests):8.4f}  {per_eval:6.2f}",
            flush=True,
        )


if __name__ == "__main__":
    sys.exit(main())
