"""Record golden traces from SkyDiscover's repository (behaviour PyPI's 0.1.0 lacks).

    .oracle-venv/bin/python tests/oracles/golden/record.py SOURCE [RECIPE ...] [--commit REV]

``SOURCE`` is a git directory of SkyDiscover's repository (a bare mirror such as the one the
search tool's ``fetch`` gives, a clone, or its ``.git``): ``REV`` (default ``59643ef``) is
archived into a temporary directory and its full hash is recorded.  Or ``SOURCE`` is an
extracted tree (a directory holding ``skydiscover/``); then ``--commit`` names what it is and is
recorded as given.  Without ``RECIPE`` every recipe of ``recipes.py`` runs.

Each recipe runs in its own interpreter (this one: the oracle venv has the reference's
dependencies) with the snapshot first on ``sys.path``, then this folder and ``tests/oracles``
(``recipes``, ``probes``, ``cases``), and ``PYTHONHASHSEED=0``; it writes ``RECIPE.json`` next
to this file.  Nothing of the snapshot is copied here.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_COMMIT = "59643ef"


def _git(git_dir: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True, check=True)


def _git_dir(source: Path) -> Path | None:
    for candidate in (source / ".git", source):
        probe = subprocess.run(
            ["git", f"--git-dir={candidate}", "rev-parse", "--git-dir"],
            capture_output=True,
            check=False,
        )
        if probe.returncode == 0:
            return candidate
    return None


def _run_one(tree: Path, recipe: str) -> None:
    """Inside the child interpreter: run ``recipe`` and print its trace as JSON."""
    sys.path[:0] = [str(tree), str(HERE), str(HERE.parent)]
    import recipes  # noqa: PLC0415  (needs the path above)

    function = recipes.RECIPES[recipe]
    print(json.dumps({"why": " ".join((function.__doc__ or "").split()), "trace": function()}))


def _record(tree: Path, commit: str, recipe: str) -> Path:
    done = subprocess.run(
        [sys.executable, __file__, "--run-one", str(tree), recipe],
        capture_output=True,
        text=True,
        check=False,
        cwd=tempfile.gettempdir(),  # nothing of ours shadows the snapshot from the cwd
        env={**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": ""},
    )
    if done.returncode != 0:
        raise SystemExit(f"recipe {recipe} failed:\n{done.stderr[-4000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    out = HERE / f"{recipe}.json"
    record = {"commit": commit, "recipe": recipe, "why": result["why"], "trace": result["trace"]}
    out.write_text(json.dumps(record, separators=(",", ":")) + "\n")
    return out


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "--run-one":
        _run_one(Path(sys.argv[2]), sys.argv[3])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="SkyDiscover git directory or extracted tree")
    parser.add_argument("recipes", nargs="*", help="recipes to record (default: all)")
    parser.add_argument("--commit", default=None, help=f"revision (default {DEFAULT_COMMIT})")
    args = parser.parse_args()
    sys.path[:0] = [str(HERE), str(HERE.parent)]
    import recipes  # noqa: PLC0415

    names = args.recipes or list(recipes.RECIPES)
    unknown = [n for n in names if n not in recipes.RECIPES]
    if unknown:
        parser.error(f"unknown recipe {', '.join(unknown)}; known: {', '.join(recipes.RECIPES)}")
    source = args.source.resolve()
    with tempfile.TemporaryDirectory(prefix="skydiscover-snapshot-") as tmp:
        if (source / "skydiscover").is_dir():
            if args.commit is None:
                parser.error(f"{source} is an extracted tree: say which commit with --commit")
            tree, commit = source, args.commit
        elif (git_dir := _git_dir(source)) is not None:
            rev = args.commit or DEFAULT_COMMIT
            commit = _git(git_dir, "rev-parse", f"{rev}^{{commit}}").stdout.decode().strip()
            archive = _git(git_dir, "archive", commit).stdout
            subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
            tree = Path(tmp)
        else:
            parser.error(f"{source}: neither a git directory nor a tree with skydiscover/")
        if not (tree / "skydiscover").is_dir():
            parser.error(f"{source} at {commit}: no skydiscover/ package")
        for name in names:
            print(f"wrote {_record(tree, commit, name)} ({commit[:12]})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
