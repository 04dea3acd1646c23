"""Record a golden trace from a local snapshot of SkyDiscover's repository (not on PyPI).

    .oracle-venv/bin/python tests/oracles/golden/record.py SNAPSHOT_DIR RECIPE [COMMIT]

Runs ``recipes.RECIPE()`` with ``SNAPSHOT_DIR`` first on ``sys.path`` (so ``import
skydiscover`` is the snapshot's) and writes ``RECIPE.json`` next to this file, stamped with the
commit.  Run with the oracle venv's interpreter: it has the reference's dependencies.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    snapshot, recipe = Path(sys.argv[1]).resolve(), sys.argv[2]
    commit = sys.argv[3] if len(sys.argv) > 3 else "59643ef"
    if not (snapshot / "skydiscover").is_dir():
        print(f"{snapshot}: no skydiscover/ package in this snapshot", file=sys.stderr)
        return 2
    sys.path.insert(0, str(snapshot))
    sys.path.insert(1, str(HERE))
    recipes = importlib.import_module("recipes")
    trace = getattr(recipes, recipe)()
    out = HERE / f"{recipe}.json"
    out.write_text(json.dumps({"commit": commit, "recipe": recipe, "trace": trace}, indent=1))
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
