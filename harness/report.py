"""What a stored run holds, as plain data: programs, lineage, events, prompts, failures, config;
and ``export``, which writes a run to a folder laid out as OpenEvolve/SkyDiscover users expect.

The CLI (``galapagos show``, ``galapagos export``) and the service are thin layers over these.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from harness.core.errors import ConfigError
from harness.core.records import Program
from harness.core.redact import redact_text, redact_url
from harness.core.store import RunRecord
from harness.provenance import run_llm
from harness.store.protocols import RunReader

__all__ = [
    "EVENT_GROUPS",
    "export_run",
    "llm_usage",
    "failures",
    "lineage",
    "program_rows",
    "prompts",
    "run_events",
    "source_suffix",
]

#: Names a user can filter events by (``--kind switches``), besides the raw kinds.
EVENT_GROUPS: Mapping[str, tuple[str, ...]] = {
    "switches": ("strategy_switch", "strategy_deployed", "strategy_trigger", "strategy_scored"),
    "fallbacks": ("strategy_failure", "strategy_restore", "strategy_retry", "strategy_unscored"),
    "migrations": ("migration", "migrate", "island_migration"),
    "islands": ("island_spawn", "spawn", "migration", "migrate", "island_migration"),
    "paradigms": ("paradigm_install", "paradigm_rotate", "paradigm_generation_failed"),
    "failures": ("iteration_failed", "hook_skipped"),
}

_SUFFIX = {"python": ".py", "py": ".py", "cpp": ".cpp", "c++": ".cpp", "c": ".c", "rust": ".rs"}


def source_suffix(language: str) -> str:
    return _SUFFIX.get(language.lower(), ".txt")


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def program_rows(store: RunReader, run: RunRecord) -> list[dict[str, Any]]:
    """Every stored program of the run (members, evicted ones and block-made copies)."""
    return [_row(p, run) for p in store.programs(run.id)]


def _row(p: Program, run: RunRecord) -> dict[str, Any]:
    return {
        "id": p.id,
        "iteration": p.iteration,
        "parent_id": p.parent_id,
        "score": _finite(p.score),
        "generation": p.generation,
        "metrics": dict(p.metrics),
        "inspiration_ids": list(p.inspiration_ids),
        "label": p.parent_label,
        "changes": p.changes,
        "metadata": dict(p.metadata),
        "best": p.id == run.best_program_id,
    }


def lineage(store: RunReader, run: RunRecord) -> dict[str, Any]:
    """The ancestry tree: roots (programs without a stored parent) with nested children, and
    the chain from the best program back to its root."""
    programs = store.programs(run.id)
    by_id = {p.id: p for p in programs}
    nodes: dict[str, dict[str, Any]] = {
        p.id: {
            "id": p.id,
            "iteration": p.iteration,
            "score": _finite(p.score),
            "copy_of": p.metadata.get("copy_of"),
            "children": [],
        }
        for p in programs
    }
    roots: list[dict[str, Any]] = []
    for p in programs:  # no recursion: a lineage may be thousands of generations deep
        parent = nodes.get(p.parent_id or "")
        (parent["children"] if parent is not None else roots).append(nodes[p.id])

    chain: list[str] = []
    cur = by_id.get(run.best_program_id or "")
    while cur is not None and cur.id not in chain:
        chain.append(cur.id)
        cur = by_id.get(cur.parent_id or "")
    return {"roots": roots, "best_ancestry": chain}


def run_events(store: RunReader, run: RunRecord, kinds: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The run's events in order, optionally only some kinds (or groups: see EVENT_GROUPS)."""
    wanted: list[str] = []
    for kind in kinds:
        wanted.extend(EVENT_GROUPS.get(kind, (kind,)))
    events = store.events(run.id, wanted or None)
    return [{"iteration": e.iteration, "kind": e.kind, **dict(e.payload)} for e in events]


def llm_usage(store: RunReader, run: RunRecord) -> dict[str, Any]:
    """Calls, tokens and cost in all, by model, by purpose and by iteration, with the prices
    the run used (USD per million tokens; ``None``: unknown, its calls count 0) and the date of
    the price table they came from."""
    usage = dict(store.llm_usage(run.id))
    per: dict[int, dict[str, Any]] = {}
    for call in store.llm_calls(run.id):
        row = per.setdefault(
            int(call["iteration"]),
            {"iteration": int(call["iteration"]), "calls": 0, "tokens": 0, "cost": 0.0},
        )
        row["calls"] += 1
        row["tokens"] += int(call["prompt_tokens"] or 0) + int(call["completion_tokens"] or 0)
        row["cost"] += float(call["cost"] or 0.0)
    llm = run_llm(run.config)
    usage["by_iteration"] = [per[i] for i in sorted(per)]
    usage["prices"] = llm["prices"]
    usage["price_table"] = llm["price_table"]
    usage["price_unknown"] = llm["price_unknown"]
    return usage


def prompts(store: RunReader, run: RunRecord, iteration: int | None) -> list[dict[str, Any]]:
    """Prompts and responses (one iteration's, or all), as stored with each LLM call."""
    return store.llm_exchanges(run.id, iteration)


def failures(store: RunReader, run: RunRecord) -> list[dict[str, Any]]:
    """Every failed iteration with each of its attempts' outcome and error."""
    failed = {e.iteration for e in store.events(run.id, ["iteration_failed"])}
    out: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for e in store.events(run.id, ["attempt"]):
        if e.iteration in failed:
            out[e.iteration].append(
                {
                    "attempt": e.payload.get("attempt"),
                    "outcome": e.payload.get("outcome"),
                    "status": e.payload.get("status"),
                    "error": str(e.payload.get("error") or "")[-1000:],
                }
            )
    return [{"iteration": i, "attempts": out.get(i, [])} for i in sorted(failed)]


def _redacted(config: Mapping[str, Any]) -> dict[str, Any]:
    """A stored config with its endpoint's credentials masked (keys come from the env)."""
    data = dict(config)
    llm = data.get("llm")
    if isinstance(llm, Mapping) and llm.get("api_base"):
        data["llm"] = {**llm, "api_base": redact_url(llm["api_base"])}
    return data


def export_run(
    store: RunReader,
    run: RunRecord,
    out: Path,
    *,
    with_prompts: bool = False,
    summary: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Write ``run`` to ``out`` and return what was written (paths relative to ``out``).

    Layout (OpenEvolve users look for ``best/best_program.py`` and its info):
    ``best/best_program<suffix>`` (runnable source), ``best/best_program_info.json``,
    ``programs/<id><suffix>`` plus ``programs/index.json``, ``lineage.json``, ``config.yaml``
    (the resolved run config), ``run.json`` (the summary), ``events.jsonl`` and, with
    ``with_prompts``, ``prompts.jsonl``.  An existing non-empty folder is refused.
    """
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ConfigError(f"export folder {out} exists and is not empty; choose another --out")
    programs = store.programs(run.id)
    if not programs:
        raise ConfigError(f"run {run.id} has no program yet; nothing to export")
    by_id = {p.id: p for p in programs}
    best = by_id.get(run.best_program_id or "")
    (out / "programs").mkdir(parents=True, exist_ok=True)
    written: list[str] = []

    def write(rel: str, text: str) -> None:
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        written.append(rel)

    def dump(value: Any) -> str:
        return json.dumps(value, indent=2, default=str, allow_nan=False) + "\n"

    if best is not None:
        suffix = source_suffix(best.language)
        write(f"best/best_program{suffix}", best.code)
        ancestry = lineage(store, run)["best_ancestry"]
        write(
            "best/best_program_info.json",
            dump(
                {
                    "run_id": run.id,
                    "task": run.task,
                    "scaffold": run.scaffold,
                    **_row(best, run),
                    "ancestry": ancestry,
                }
            ),
        )
    for p in programs:
        write(f"programs/{p.id}{source_suffix(p.language)}", p.code)
    write("programs/index.json", dump([_row(p, run) for p in programs]))
    write("lineage.json", dump(lineage(store, run)))
    write("config.yaml", yaml.safe_dump(_redacted(run.config), sort_keys=False))
    write("run.json", redact_text(dump(dict(summary or {}) or {"run_id": run.id})))
    write(
        "events.jsonl",
        "".join(redact_text(json.dumps(e, default=str)) + "\n" for e in run_events(store, run)),
    )
    if with_prompts:
        write(
            "prompts.jsonl",
            "".join(
                redact_text(json.dumps(c, default=str)) + "\n" for c in store.llm_exchanges(run.id)
            ),
        )
    return {"out": str(out), "best_program": best.id if best else None, "files": written}
