"""Run the compat matrix (the peers' own task folders, tests/data/peers) and print each cell:
status, iterations, seed and best score, evaluations, wall time.

    python bench/compat_matrix.py                 # the cells the test command runs (status run)
    python bench/compat_matrix.py --heavy         # the heavy cells, recording their results in
                                                  # tests/data/peers/heavy_results.json
    python bench/compat_matrix.py --only NAME...  # cells whose folder name contains NAME

Offline (the offline model is a mutation operator, not an LLM), Docker sandbox, 3 iterations.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.store.sqlite import SQLiteStore  # noqa: E402
from tests.compat.matrix import HEAVY_RESULTS, cells, run_cells  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--heavy", action="store_true", help="the heavy cells (and record them)")
    parser.add_argument("--all", action="store_true", help="run and heavy cells")
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--parallel", type=int, default=2)
    args = parser.parse_args()
    statuses = (
        ["heavy", "image"] if args.heavy else ["run", "heavy", "image"] if args.all else ["run"]
    )
    chosen = cells(statuses)
    if args.only:
        chosen = [c for c in chosen if any(o in c.name for o in args.only)]
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteStore(Path(tmp) / "matrix.sqlite")
        outcomes = asyncio.run(run_cells(chosen, store, parallel=args.parallel))
    for o in outcomes:
        scores = f"{o.seed_score!s:>22} {o.best_score!s:>22}"
        print(
            f"{o.cell.name:60} {o.status:10} {o.iterations} {o.evaluations:3} {scores} "
            f"{o.wall_s:6.1f}s {o.error[:160]}"
        )
    print(f"wall time {time.monotonic() - started:.1f} s for {len(outcomes)} cells")
    if args.heavy and not args.only:
        record = {
            "measured": datetime.date.today().isoformat(),
            "cells": [o.as_dict() for o in outcomes],
        }
        HEAVY_RESULTS.write_text(json.dumps(record, indent=1) + "\n")
        print(f"wrote {HEAVY_RESULTS}")


if __name__ == "__main__":
    main()
