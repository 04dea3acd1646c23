"""Task folders the hub may run: only from its configured roots, by name.

A request names a task (``circle_packing``), never a path: the name is one path component,
looked up in each root in turn (the shipped tasks first).  A folder that resolves outside its
root (a symlinked task folder) or holds a symlink leading out of the folder is refused, so
neither ``..`` nor a link can make the hub read or ship a file from elsewhere.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from harness.core.errors import TaskError
from harness.evaluation.task import list_tasks, tasks_root

__all__ = ["TaskRef", "TaskRoots"]

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")


@dataclass(frozen=True)
class TaskRef:
    name: str
    path: Path
    root: Path


class TaskRoots:
    def __init__(self, extra: tuple[Path, ...] = ()) -> None:
        roots = [tasks_root(), *extra]
        self.roots: tuple[Path, ...] = tuple(dict.fromkeys(r.resolve() for r in roots))

    def names(self) -> list[TaskRef]:
        """Every task in the roots; of two with one name, the earlier root's."""
        found: dict[str, TaskRef] = {}
        for root in self.roots:
            for name in list_tasks(root):
                if name not in found and _NAME.fullmatch(name):
                    found[name] = TaskRef(name, root / name, root)
        return sorted(found.values(), key=lambda t: t.name)

    def resolve(self, name: str) -> TaskRef:
        """The task folder ``name`` names (a TaskError, answered 4xx, for anything else)."""
        if not _NAME.fullmatch(name) or ".." in name:
            raise TaskError(
                f"task {name[:80]!r}: give the name of a task in the hub's task roots "
                "(letters, digits, '_', '-', '.'), not a path; see /api/v1/tasks"
            )
        for root in self.roots:
            candidate = root / name
            if not candidate.is_dir():
                continue
            real = candidate.resolve()
            if not real.is_relative_to(root):
                raise TaskError(
                    f"task {name!r} is a link out of its task root {root}; the hub runs only "
                    "tasks inside its roots"
                )
            _no_escaping_links(real)
            return TaskRef(name, real, root)
        known = ", ".join(t.name for t in self.names()) or "(none)"
        raise TaskError(f"unknown task {name!r}; the hub's tasks are: {known}")

    def contains(self, folder: Path) -> None:
        """Refuse (TaskError) a task folder that is not a task of one of the roots: it must
        lie directly in a root, and hold no link leading out of it."""
        real = folder.resolve()
        if real.parent not in self.roots or not real.is_dir():
            raise TaskError(
                f"its task folder {folder} lies outside the hub's task roots; the hub runs only "
                "tasks inside its roots (galapagos serve --task-root DIR adds one)"
            )
        _no_escaping_links(real)


def _no_escaping_links(folder: Path) -> None:
    for dirpath, dirnames, filenames in os.walk(folder):
        for entry in [*dirnames, *filenames]:
            path = Path(dirpath) / entry
            if path.is_symlink() and not path.resolve().is_relative_to(folder):
                raise TaskError(
                    f"task {folder.name}: {path.relative_to(folder)} links outside the task "
                    "folder; the hub refuses tasks whose files lead elsewhere"
                )
