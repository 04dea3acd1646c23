"""The ``openevolve`` scaffold and OpenEvolve 0.4.0 side by side on one task folder.

Both talk to the same OpenAI-compatible endpoint (``--api-base`` and ``--model``; by default
Galapagos' offline model, started here on loopback: a mutation operator, not an LLM).  Prints the
best score after each iteration and the wall time of both.  OpenEvolve runs in its own
interpreter (``--oracle-python``, default ``.oracle-venv/bin/python``; skipped when missing)
and, as it always does, evaluates candidates in its own process: use trusted folders only.
Galapagos runs every candidate in the sandbox (``--sandbox``).

    python bench/openevolve_side_by_side.py FOLDER [--iterations 30] [--seed 42]
        [--api-base URL --model NAME] [--sandbox docker|local] [--oracle-python PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402

from harness.store.sqlite import SQLiteStore  # noqa: E402

#: Runs OpenEvolve 0.4.0 in the oracle interpreter and prints the best fitness after each
#: completed iteration (recorded around ``ProgramDatabase.add`` in its main process).
DRIVER = """
import asyncio, json, sys, time, logging
logging.disable(logging.CRITICAL)
from openevolve import OpenEvolve
from openevolve.config import load_config
from openevolve.database import ProgramDatabase
from openevolve.utils.metrics_utils import get_fitness_score

folder, config_path, out_dir, iterations = sys.argv[1:5]
best = {}
original = ProgramDatabase.add

def add(self, program, iteration=None, target_island=None):
    result = original(self, program, iteration=iteration, target_island=target_island)
    top = self.get_best_program()
    if top is not None:  # the initial program is added without an iteration
        key = 0 if iteration is None else int(iteration)
        best[key] = get_fitness_score(top.metrics, self.config.feature_dimensions)
    return result

ProgramDatabase.add = add
config = load_config(config_path)
start = time.perf_counter()
engine = OpenEvolve(folder + "/initial_program.py", folder + "/evaluator.py", config=config,
                    output_dir=out_dir)
asyncio.run(engine.run(iterations=int(iterations)))
print(json.dumps({"best": best, "wall_s": time.perf_counter() - start}))
"""


def run_ours(args: argparse.Namespace, api_base: str, model: str, store: Path) -> dict[str, Any]:
    cmd = [
        sys.executable, "-m", "harness.cli", "run", "--scaffold", "openevolve",
        "--task", str(args.folder), "--iterations", str(args.iterations),
        "--seed", str(args.seed), "--api-base", api_base, "--model", model,
        "--sandbox", args.sandbox, "--store", str(store), "--json", "--quiet",
    ]  # fmt: skip
    env = {**os.environ, "OPENAI_API_KEY": os.environ.get("OPENAI_API_KEY", "none")}
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"galapagos failed:\n{done.stderr[-3000:]}")
    summary = json.loads(done.stdout)
    st = SQLiteStore(store)
    try:
        history = dict(st.score_history(summary["run_id"]))
        children = {
            p.iteration
            for p in st.programs(summary["run_id"])
            if p.iteration > 0 and "copy_of" not in p.metadata
        }
    finally:
        st.close()
    return {"best": history, "wall_s": wall, "children": len(children)}


def run_reference(
    args: argparse.Namespace, api_base: str, model: str, work: Path
) -> dict[str, Any] | None:
    oracle = Path(args.oracle_python)
    if not oracle.exists():
        print(f"OpenEvolve skipped: no interpreter at {oracle}", file=sys.stderr)
        return None
    config_file = args.folder / "config.yaml"
    config: dict[str, Any] = {}
    if config_file.exists():
        config = yaml.safe_load(config_file.read_text()) or {}
    config["max_iterations"] = args.iterations
    config["random_seed"] = args.seed
    config["checkpoint_interval"] = args.iterations + 1
    llm = config.setdefault("llm", {})
    llm.update(api_base=api_base, api_key=os.environ.get("OPENAI_API_KEY", "none"))
    llm["models"] = [{"name": model, "weight": 1.0}]
    llm.pop("primary_model", None)
    llm.pop("secondary_model", None)
    config.setdefault("evaluator", {})["parallel_evaluations"] = 1
    path = work / "oe_config.yaml"
    path.write_text(yaml.safe_dump(config))
    done = subprocess.run(
        [
            str(oracle),
            "-c",
            DRIVER,
            str(args.folder.resolve()),
            str(path),
            str(work / "oe_out"),
            str(args.iterations),
        ],  # fmt: skip
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "OPENAI_API_KEY": os.environ.get("OPENAI_API_KEY", "none")},
    )
    if done.returncode != 0:
        raise SystemExit(f"OpenEvolve failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["best"] = {int(k): v for k, v in result["best"].items()}
    return result


def curve(best: dict[int, float | None], iterations: int) -> list[float | None]:
    out: list[float | None] = []
    current: float | None = None
    for i in range(iterations + 1):
        if best.get(i) is not None:
            current = best[i]
        out.append(current)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="an OpenEvolve-format task folder")
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--api-base", default=None, help="default: the offline model")
    parser.add_argument("--model", default=None)
    parser.add_argument("--sandbox", default="docker", choices=["docker", "local"])
    parser.add_argument("--oracle-python", default=str(ROOT / ".oracle-venv" / "bin" / "python"))
    args = parser.parse_args()
    server = None
    api_base, model = args.api_base, args.model
    if api_base is None:
        from harness.llm.offline import start_offline_server
        from harness.llm.offline.server import OFFLINE_MODEL

        server = start_offline_server(seed=args.seed)
        api_base, model = server.base_url, OFFLINE_MODEL
        print(f"endpoint: the offline model (a mutation operator, not an LLM) at {api_base}")
    if model is None:
        raise SystemExit("--model is required with --api-base")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            ours = run_ours(args, api_base, model, work / "ours.sqlite")
            theirs = run_reference(args, api_base, model, work)
    finally:
        if server is not None:
            server.close()
    a = curve(ours["best"], args.iterations)
    b = curve(theirs["best"], args.iterations) if theirs else [None] * len(a)

    def show(v: float | None) -> str:
        return f"{v:.6f}" if v is not None else "-"

    print(f"{'iteration':>9}  {'galapagos':>12}  {'openevolve':>12}")
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        print(f"{i:>9}  {show(x):>12}  {show(y):>12}")
    print(f"wall time: galapagos {ours['wall_s']:.1f} s", end="")
    print(f", openevolve {theirs['wall_s']:.1f} s" if theirs else ", openevolve skipped")
    # Iterations that admitted a child (a no-diff step admits none).
    made = ours["children"]
    theirs_made = sum(1 for i in theirs["best"] if i > 0) if theirs else 0
    print(f"iterations with a child: galapagos {made}, openevolve {theirs_made}")


if __name__ == "__main__":
    main()
