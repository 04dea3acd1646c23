"""Scaffolds, blocks and tasks as the hub shows them.

Everything the hub knows about the block contract goes through this module (the registry's
``list_scaffolds``/``get_spec``/``list_blocks``), so a change of that contract touches one file.
"""

from __future__ import annotations

import functools
import hashlib
import re
import time
from pathlib import Path
from typing import Any

from harness.core.config import SLOTS
from harness.core.errors import ConfigError, HarnessError, RunNotFound
from harness.core.registry import get_spec, list_blocks, list_scaffolds
from harness.evaluation.task import load_task
from harness.service.schemas import finite
from harness.service.tasks import TaskRoots
from harness.store.protocols import RunReader, StoreReader

__all__ = ["SLOTS", "blocks", "scaffold", "scaffold_names", "task", "tasks"]

#: What each slot is for, in the words of the hub's cards.
SLOT_HELP = {
    "population": "The set of candidate programs in play: the pool the search evolves over.",
    "selection_policy": "Chooses the parent to improve and the programs shown beside it.",
    "prompt": "Assembles what the model sees: parent, context, feedback, instructions.",
    "proposer": "The LLM-driven variation operator: turns the answer into a new program.",
    "evaluator": "Scores each candidate against the task, in the sandbox.",
    "memory": "Knowledge kept across candidates: histories, archives, strategies.",
}
_FILE_SUFFIXES = (".py", ".yaml", ".yml", ".md", ".txt", ".j2")


def scaffold_names() -> list[str]:
    return list_scaffolds()


def _spec(name: str) -> Any:
    if name not in list_scaffolds():  # never a path: the hub shows shipped scaffolds only
        raise RunNotFound(
            f"no scaffold {name[:64]!r}; the scaffolds are: {', '.join(list_scaffolds())}"
        )
    return get_spec(name)


def scaffold(name: str) -> dict[str, Any]:
    """A shipped scaffold's card, composition, blocks, defaults and files (read once: the
    shipped scaffolds do not change while the hub runs; callers must not modify it)."""
    _spec(name)  # an unknown name is refused before the cache sees it
    return _scaffold(name)


@functools.lru_cache(maxsize=64)
def _scaffold(name: str) -> dict[str, Any]:
    spec = _spec(name)
    info = spec.describe()
    by_name = {(b.slot, b.name): b for b in list_blocks()}
    composition = info["composition"]
    chosen = [
        by_name[(slot, composition[slot])].describe()
        for slot in SLOTS
        if (slot, composition[slot]) in by_name
    ]
    readme = spec.folder / "README.md"
    card = readme.read_text() if readme.is_file() else ""
    defaults = {k: v for k, v in spec.defaults().items() if k != "blocks"}
    return finite(
        {
            "name": spec.name,
            "summary": info["summary"],
            "composition": composition,
            "loop": info["loop"],
            "blocks": chosen,
            "defaults": defaults,
            "card": card,
            "files": _files(spec.folder),
            "tags": _tags(card),
        }
    )


def scaffold_file(name: str, rel: str) -> str:
    """The text of one file of a shipped scaffold (only files :func:`scaffold` lists)."""
    spec = _spec(name)
    listed = {f["path"] for f in _files(spec.folder)}
    if rel not in listed:
        raise RunNotFound(f"scaffold {spec.name} has no file {rel[:80]!r}")
    return (spec.folder / rel).read_text()


def _files(folder: Path) -> list[dict[str, Any]]:
    out = []
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.is_symlink() or "__pycache__" in path.parts:
            continue
        if path.suffix not in _FILE_SUFFIXES:
            continue
        data = path.read_bytes()
        out.append(
            {
                "path": str(path.relative_to(folder)),
                "lines": data.count(b"\n"),
                "bytes": len(data),
                "sha256": hashlib.sha256(data).hexdigest()[:16],
            }
        )
    return out


def _tags(card: str) -> list[str]:
    """Tags a card lists on a ``Tags:`` line (none when it has none)."""
    match = re.search(r"^Tags:\s*(.+)$", card, re.M)
    if not match:
        return []
    return [t.strip().strip("`") for t in match.group(1).split(",") if t.strip()]


def blocks(slot: str | None = None) -> list[dict[str, Any]]:
    if slot is not None and slot not in SLOTS:
        raise ConfigError(f"slot {slot[:40]!r}: not a slot; valid slots: {', '.join(SLOTS)}")
    specs = [s for s in list_blocks() if slot is None or s.slot == slot]
    specs.sort(key=lambda s: (SLOTS.index(s.slot), s.name))
    return [finite(s.describe()) for s in specs]


def blocks_by_slot() -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = {slot: [] for slot in SLOTS}
    for block in blocks():
        grouped[block["slot"]].append(block)
    return grouped


def _task_row(
    name: str, path: Path, best: dict[str, tuple[float, dict[str, Any]]], best_run: dict[str, str]
) -> dict[str, Any]:
    card = _card(str(path), _stamp(path))
    known = card.best_known
    stored: tuple[float | None, dict[str, Any]] = best.get(card.name, (None, {}))
    return finite(
        {
            "name": name,
            "objective": card.objective,
            "direction": card.direction,
            "description": card.description,
            "best_known": known.value if known else None,
            "best_known_source": known.source if known else None,
            "best_stored_score": stored[0],
            "best_stored_run": best_run.get(card.name),
            "limits": card.limits.model_dump(mode="json"),
        }
    )


def _stamp(folder: Path) -> tuple[int, ...]:
    """When the folder or its card last changed (a changed task is read again)."""
    stamps = []
    for path in (folder, folder / "task.yaml", folder / "config.yaml"):
        try:
            stamps.append(path.stat().st_mtime_ns)
        except OSError:
            stamps.append(0)
    return tuple(stamps)


@functools.lru_cache(maxsize=256)
def _card(path: str, stamp: tuple[int, ...]) -> Any:
    return load_task(path).card


#: Seconds the best score per task is reused (each read scans every stored run).
_BESTS_S = 2.0
_bests_kept: dict[str, tuple[float, Any]] = {}


def _bests(store: StoreReader) -> tuple[dict[str, tuple[float, dict[str, Any]]], dict[str, str]]:
    """The best stored score per task and its run; read at most every ``_BESTS_S`` seconds
    per store (a busy hub's task pages would otherwise scan every run on every view)."""
    key = str(store.path)
    kept = _bests_kept.get(key)
    if kept is not None and time.monotonic() - kept[0] < _BESTS_S:
        return kept[1]
    value = _read_bests(store)
    _bests_kept[key] = (time.monotonic(), value)
    return value


def _read_bests(
    store: RunReader,
) -> tuple[dict[str, tuple[float, dict[str, Any]]], dict[str, str]]:
    best = store.best_by_task()
    runs: dict[str, str] = {}
    for run in store.list_runs():
        if run.best_score is not None and run.best_score == best.get(run.task, (None,))[0]:
            runs.setdefault(run.task, run.id)
    return best, runs


def tasks(roots: TaskRoots, store: StoreReader) -> list[dict[str, Any]]:
    best, best_run = _bests(store)
    out = []
    for ref in roots.names():
        try:
            out.append(_task_row(ref.name, ref.path, best, best_run))
        except HarnessError:
            continue  # a broken folder is listed by `galapagos task check`, not here
    return out


def task(roots: TaskRoots, store: StoreReader, name: str) -> dict[str, Any]:
    ref = roots.resolve(name)
    best, best_run = _bests(store)
    return _task_row(ref.name, ref.path, best, best_run)
