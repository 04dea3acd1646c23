"""Same seed, same programs: fingerprint seeded runs of every shipped scaffold, or compare two.

    python scripts/same_programs.py record OUT.json [--iterations 20] [--docker]
    python scripts/same_programs.py compare BEFORE.json AFTER.json

``record`` runs each shipped scaffold on circle_packing and function_minimization with seeds 3
and 7 (offline model, ``--sandbox local``; ``--docker`` adds a few runs in Docker), plus the
ported scaffolds in reference mode, and writes per run every program's (id, iteration, parent,
code hash, score) and every LLM call's (iteration, attempt, purpose, answer hash).  ``compare``
prints the first difference per run and exits 1 if there is any.  Used to check that a
refactoring of the block wiring or the loop changes no search (run it at the branch point and
after).  It reads the store with ``sqlite3`` so that it does not depend on the store's API.

Record both from a checkout at the same path (e.g. ``git archive REV | tar -x -C /tmp/x``, then
``python /tmp/x/scripts/same_programs.py record …`` from there): a local-sandbox traceback
names the checkout's files, and tracebacks reach the next attempt's prompt.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SCAFFOLDS = ("adaevolve", "best_of_n", "best_of_n_attempts", "evox", "openevolve", "topk")
TASKS = ("circle_packing", "function_minimization")
SEEDS = (3, 7)
#: (scaffold, task, seed, extra --set items): reference mode of the ported scaffolds.
REFERENCE = [
    (name, "circle_packing", 3, ["loop.reference_mode=true"])
    for name in ("adaevolve", "best_of_n", "openevolve", "topk")
]
DOCKER = [("evox", "circle_packing", 3, []), ("openevolve", "function_minimization", 7, [])]


def _digest(text: str | None) -> str:
    return hashlib.sha256((text or "").encode()).hexdigest()[:16]


def _fingerprint(store: Path, run_id: str) -> dict[str, Any]:
    conn = sqlite3.connect(store)
    try:
        programs = [
            [pid, iteration, parent, _digest(code), score]
            for pid, iteration, parent, code, score in conn.execute(
                "SELECT id, iteration, parent_id, code, score FROM programs WHERE run_id=? "
                "ORDER BY iteration, id",
                (run_id,),
            )
        ]
        calls = [
            [iteration, attempt, purpose, ok, _digest(response)]
            for iteration, attempt, purpose, ok, response in conn.execute(
                "SELECT iteration, attempt, purpose, ok, response FROM llm_calls WHERE run_id=? "
                "ORDER BY rowid",
                (run_id,),
            )
        ]
        (status,) = conn.execute("SELECT status FROM runs WHERE id=?", (run_id,)).fetchone()
    finally:
        conn.close()
    return {"status": status, "programs": programs, "llm_calls": calls}


def _run(
    scaffold: str, task: str, seed: int, settings: list[str], iterations: int, sandbox: str
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "s.sqlite"
        cmd = [
            sys.executable, "-m", "harness.cli", "run", "--scaffold", scaffold, "--task", task,
            "--seed", str(seed), "--iterations", str(iterations), "--sandbox", sandbox,
            "--store", str(store), "--json", "--quiet",
        ]  # fmt: skip
        for item in settings:
            cmd += ["--set", item]
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
        started = time.process_time()
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            return {"error": proc.stderr.strip()[-2000:]}
        run_id = json.loads(proc.stdout)["run_id"]
        out = _fingerprint(store, run_id)
        out["cpu_s"] = round(time.process_time() - started, 2)
        return out


def record(path: Path, iterations: int, docker: bool) -> None:
    matrix = [(s, t, seed, [], "local") for s in SCAFFOLDS for t in TASKS for seed in SEEDS]
    matrix += [(s, t, seed, extra, "local") for s, t, seed, extra in REFERENCE]
    if docker:
        matrix += [(s, t, seed, extra, "docker") for s, t, seed, extra in DOCKER]
    runs: dict[str, Any] = {}
    for scaffold, task, seed, extra, sandbox in matrix:
        key = "/".join([scaffold, task, str(seed), sandbox, *extra])
        started = time.monotonic()
        runs[key] = _run(scaffold, task, seed, extra, iterations, sandbox)
        found = runs[key]
        shown = found.get("error") or f"{len(found['programs'])} programs, {found['status']}"
        print(f"{key}: {shown} ({time.monotonic() - started:.0f} s)", file=sys.stderr)
    path.write_text(json.dumps({"iterations": iterations, "runs": runs}, indent=1))


def _comparable(part: str, value: Any) -> Any:
    """LLM calls made concurrently within one iteration (EvoX's two guide calls) are stored in
    the order they finish, which varies from run to run: compare them sorted within their
    (iteration, attempt)."""
    if part != "llm_calls" or not isinstance(value, list):
        return value
    return sorted(value, key=lambda call: (call[0], call[1], str(call[2:])))


def compare(before: Path, after: Path) -> int:
    a = json.loads(before.read_text())["runs"]
    b = json.loads(after.read_text())["runs"]
    differ = 0
    for key in sorted(set(a) | set(b)):
        if key not in a or key not in b:
            print(f"{key}: only in {'after' if key not in a else 'before'}")
            differ += 1
            continue
        for part in ("error", "status", "programs", "llm_calls"):
            x, y = _comparable(part, a[key].get(part)), _comparable(part, b[key].get(part))
            if x != y:
                differ += 1
                if isinstance(x, list) and isinstance(y, list):
                    pairs = enumerate(zip(x, y, strict=False))
                    n = next((i for i, (u, v) in pairs if u != v), min(len(x), len(y)))
                    print(f"{key}: {part} differ at #{n}: {x[n : n + 1]} vs {y[n : n + 1]}")
                else:
                    print(f"{key}: {part}: {x!r:.200} vs {y!r:.200}")
                break
        else:
            runs = a[key]
            print(f"{key}: same ({len(runs['programs'])} programs, {len(runs['llm_calls'])} calls)")
    print(f"{len(set(a) | set(b)) - differ} same, {differ} differ")
    return 1 if differ else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("out", type=Path)
    rec.add_argument("--iterations", type=int, default=20)
    rec.add_argument("--docker", action="store_true")
    cmp_ = sub.add_parser("compare")
    cmp_.add_argument("before", type=Path)
    cmp_.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "record":
        record(args.out, args.iterations, args.docker)
        return 0
    return compare(args.before, args.after)


if __name__ == "__main__":
    raise SystemExit(main())
