"""``docs/compat.md`` from the compat matrix's manifest (``tests/data/peers/manifest.yaml``) and
the heavy cells' last recorded results (``heavy_results.json``).

    python -m tests.compat.render            # print
    python -m tests.compat.render --write    # update docs/compat.md

``tests/compat/test_matrix.py`` fails when the page is stale.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from tests.compat.matrix import HEAVY_RESULTS, ITERATIONS, ROOT, cells, manifest

DOC = ROOT / "docs" / "compat.md"

STATUS = {
    "run": "runs (test command)",
    "heavy": "runs (bench)",
    "refused": "stops before any LLM call",
    "image": "runs in its image (built on demand)",
    "not_run": "not run",
}

INTRO = f"""\
# Compatibility: the peers' own task folders

Generated from `tests/data/peers/manifest.yaml` by `python -m tests.compat.render --write`; a
test fails when this page is stale. Do not edit it by hand.

Every task folder of OpenEvolve's `examples/` and of SkyDiscover's `benchmarks/math/`, at the
commits below, run as its authors meant: with the method it was written for (OpenEvolve's folders
with the `openevolve` scaffold; SkyDiscover's math configs name no search, so `skydiscover-run`'s
default, `topk`), its own config file, and Galapagos' offline model in place of the endpoint the
file names (`--offline`; the offline model is a mutation operator, not an LLM, so the scores say
that a folder runs, not how well a method does). The folders are test data in
`tests/data/peers/` with their licences; one cell is

```console
$ galapagos run -t tests/data/peers/skydiscover/benchmarks/math/heilbronn_triangle --offline -i 3
```

(the scaffold is the folder's own when `--scaffold` is not given).

- **runs (test command)**: `tests/compat/test_matrix.py` runs it for {ITERATIONS} iterations, in
  Docker, and it must complete.
- **runs (bench)**: the same, but its evaluations take tens of seconds each on a 2-core machine,
  too slow for the test command: `python bench/compat_matrix.py --heavy` runs these cells and
  records what they did (below).
- **stops before any LLM call**: the run must stop at once with the one-line reason, which the
  test command checks too.
- **runs in its image (built on demand)**: it needs a toolchain image that a plain
  `galapagos sandbox build` skips; the test command runs it when that image is present and
  otherwise checks that it stops at once naming the build command.
- **not run**: not copied; the reason says what it needs (a GPU, the network, data or packages we
  do not have).

What applies of each folder's config file, and what is named as not used or refused, is said when
the run starts (`docs/writing-a-task.md`, "Compat mode"); SkyDiscover's containerised evaluators
(`evaluator/` with a Dockerfile) are described in `docs/sandbox.md`.
"""


def _heavy() -> dict[str, Any]:
    if not HEAVY_RESULTS.is_file():
        return {}
    data: dict[str, Any] = json.loads(HEAVY_RESULTS.read_text())
    return data


def _score(value: Any) -> str:
    return "-" if value is None else f"{value:.4g}"


def render() -> str:
    data = manifest()
    heavy = _heavy()
    measured = {c["folder"]: c for c in heavy.get("cells", [])}
    out = [INTRO]
    for repo, info in data["repositories"].items():
        title = "OpenEvolve" if repo == "openevolve" else "SkyDiscover"
        out.append(f"\n## {title}\n")
        out.append(
            f"[{info['url']}]({info['url']}) at `{info['commit'][:12]}`: "
            f"{info['pinned'].rstrip('.')}. "
            f"Licence: `tests/data/peers/{repo}/{info['licence'].split()[0]}` "
            f"({info['licence'].split('(')[-1].rstrip(')')}).\n"
        )
        out.append("| folder | scaffold | config | status | notes |")
        out.append("|---|---|---|---|---|")
        for cell in cells():
            if cell.repo != repo:
                continue
            entry = next(e for e in data["folders"] if e["repo"] == repo and e["path"] == cell.path)
            notes = entry.get("reason") or entry.get("note") or ""
            if cell.status == "heavy" and cell.name in measured:
                m = measured[cell.name]
                notes = (f"{notes}; " if notes else "") + (
                    f"measured {heavy['measured']}: {m['status']}, {m['iterations']} iterations, "
                    f"seed {_score(m['seed_score'])} → best {_score(m['best_score'])}, "
                    f"{m['wall_s']:.0f} s"
                )
            config = cell.config or ("config.yaml" if cell.status != "not_run" else "")
            out.append(
                f"| `{cell.path}` | {cell.scaffold} | {config} | {STATUS[cell.status]} | "
                f"{notes.strip()} |"
            )
    counts = {s: sum(1 for c in cells() if c.status == s) for s in STATUS}
    out.append(
        "\n" + ", ".join(f"{counts[s]} {STATUS[s]}" for s in STATUS if counts[s]) + " "
        f"({sum(counts.values())} folders).\n"
    )
    return "\n".join(out)


def main() -> None:
    text = render()
    if "--write" in sys.argv[1:]:
        DOC.write_text(text)
        print(f"wrote {DOC}")
    else:
        print(text, end="")


if __name__ == "__main__":
    main()
