"""What a run costs besides its iterations: process start, start-up canaries, the run's first
container, the seed's evaluation and the exit — Galapagos against OpenEvolve 0.4.0.

Each round runs ``galapagos run -s best_of_n -i 0`` (the seed only) and OpenEvolve's
``openevolve-run -i 0`` (which evaluates the initial program too) on OpenEvolve's circle_packing
and function_minimization folders, both talking to the shared fake endpoint (no LLM request is
made with 0 iterations), and prints, per program and folder, the median and range of the wall
time and of the CPU time of the whole process tree (user + sys, plus Galapagos' containers and
their shims): CPU is the figure to trust when other work shares the machine.

``--pythonpath DIR`` measures another checkout's Galapagos (e.g. an older commit unpacked with
``git archive``) with this checkout's environment: its ``harness`` is imported first.

    .venv/bin/python bench/startup_cost.py [--rounds 7] [--pythonpath DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._endpoint import shared_endpoint  # noqa: E402
from bench.safety_tax import (  # noqa: E402
    compile_galapagos,
    conditions,
    first_dir,
    galapagos_run,
    openevolve_run,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--oracle-python", default=str(ROOT / ".oracle-venv" / "bin" / "python"))
    parser.add_argument("--openevolve-examples", default=None)
    parser.add_argument("--pythonpath", default=None, help="another checkout to measure")
    parser.add_argument("--no-openevolve", action="store_true")
    args = parser.parse_args()
    examples = first_dir(
        args.openevolve_examples, os.environ.get("OPENEVOLVE_EXAMPLES"), "/tmp/peers/oe/examples"
    )
    if examples is None:
        raise SystemExit("OpenEvolve's examples folder was not found: pass --openevolve-examples")
    checkout = ROOT
    if args.pythonpath:
        checkout = Path(args.pythonpath).resolve()
        os.environ["PYTHONPATH"] = str(checkout)
    oracle = Path(args.oracle_python)
    compile_galapagos(checkout)
    print(f"conditions: {conditions()}", flush=True)
    rows: dict[tuple[str, str], list[dict[str, float]]] = {}
    with shared_endpoint(args.seed) as api_base, tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.rounds):
            for folder in ("circle_packing", "function_minimization"):
                path = examples / folder
                out = galapagos_run(path, "best_of_n", 0, args.seed, api_base, Path(tmp))
                rows.setdefault(("galapagos", folder), []).append(out)
                if oracle.exists() and not args.no_openevolve:
                    out = openevolve_run(oracle, path, 0, args.seed, api_base, Path(tmp))
                    rows.setdefault(("openevolve", folder), []).append(out)
    for (program, folder), outs in rows.items():
        wall = [o["wall_s"] for o in outs]
        cpu = [o["cpu_s"] for o in outs]
        print(
            f"{program:10s} {folder:22s} wall {statistics.median(wall):.2f} s "
            f"({min(wall):.2f}–{max(wall):.2f})  CPU {statistics.median(cpu):.2f} s "
            f"({min(cpu):.2f}–{max(cpu):.2f})",
            flush=True,
        )
    print(f"conditions after: {conditions()}")


if __name__ == "__main__":
    main()
