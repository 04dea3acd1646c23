"""What a task's own config contributed to a run, in one note per kind (applied, overridden by
the user's layers, not used and why).

Read against the run's :class:`~harness.core.config_layers.Layers`: a task default that a user
layer (``config``, ``set``, ``flag``) sets again is named as overridden, not as applied.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness.core.config import RunConfig
from harness.core.config_layers import Layers, Names, named
from harness.evaluation.folder_config import FolderConfig, folder_config_files
from harness.evaluation.task import Task

__all__ = ["task_notes"]

_SYSTEM_MESSAGE = "prompt.system_message"
#: The layer kinds that are the user's.
_USER_KINDS = ("config", "set", "flag")


def task_notes(
    task: Task, config: RunConfig, layers: Layers, names: Names | None = None
) -> list[str]:
    """What the task's own config contributed, and (one line) every key of it not used."""
    folder = task.folder_config
    blocks = config.blocks.named()
    keys = [_SYSTEM_MESSAGE] if task.system_message else []
    keys += list(folder.defaults_for(blocks)) if folder else []
    skipped = [key for key in keys if not _has_key(config, key)]
    if folder is None:
        return _plain_task_notes(task, config, skipped, names)

    def yours(key: str) -> bool:
        layer = layers.source_of(key)
        return layer is not None and layer.kind in _USER_KINDS

    return _Applied.of(folder, blocks, skipped, yours).notes()


def _plain_task_notes(
    task: Task, config: RunConfig, skipped: list[str], names: Names | None
) -> list[str]:
    """A task without a folder config: a compat folder's other config files, or a card's
    system message that the prompt block has no place for."""
    others = folder_config_files(task.path) if task.card.mode == "compat" else []
    if others:
        return [
            f"{task.name} has no config.yaml; not used: {', '.join(others)} (choose one with "
            f"{named(names, 'task_config')} FILE)"
        ]
    if skipped:
        return [
            f"{task.path / 'task.yaml'}: not used here: system_message (the "
            f"{config.blocks.prompt} prompt block takes none)"
        ]
    return []


@dataclass(frozen=True)
class _Applied:
    """A folder config's keys sorted for the notes."""

    folder: FolderConfig
    used: list[str]
    overridden: list[str]
    unused: dict[str, list[str]]

    @classmethod
    def of(
        cls,
        folder: FolderConfig,
        blocks: dict[str, str],
        skipped: list[str],
        yours: Callable[[str], bool],
    ) -> _Applied:
        defaults = folder.defaults_for(blocks)
        # The folder's prompt.* keys all make the system message.
        prompt_unused = _SYSTEM_MESSAGE in skipped
        prompt_yours = not prompt_unused and yours(_SYSTEM_MESSAGE)
        prompt_keys = [k for k in folder.task_keys if k.startswith("prompt.")]
        drop_prompt = prompt_unused or prompt_yours
        used = [k for k in folder.task_keys if not (drop_prompt and k in prompt_keys)]
        overridden = [key for key in defaults if key not in skipped and yours(key)]
        used += [folder.shown(key) for key in defaults if key not in skipped + overridden]
        unused = _unused(folder, blocks, skipped)
        shown = [*(prompt_keys if prompt_yours else []), *map(folder.shown, overridden)]
        return cls(folder, used, shown, unused)

    def notes(self) -> list[str]:
        name = self.folder.path.name
        notes = [f"{name}: {note}" for note in self.folder.notes]
        if self.used:
            notes.append(f"{name} ({self.folder.format} format) applies: {', '.join(self.used)}")
        if self.overridden:
            notes.append(f"{name}: overridden by your settings: {', '.join(self.overridden)}")
        for reason, keys in self.unused.items():
            notes.append(f"{name}: {', '.join(keys)} — not used here: {reason}")
        return notes


def _unused(
    folder: FolderConfig, blocks: dict[str, str], skipped: list[str]
) -> dict[str, list[str]]:
    """The folder's keys not used, by reason (also those the blocks have no place for)."""
    unused = folder.unused_for(blocks)
    if skipped:
        unused["this composition's blocks have no such setting"] = [
            folder.shown(key) for key in skipped
        ]
    return unused


def _has_key(config: RunConfig, dotted: str) -> bool:
    """Whether the config (typed by its blocks) has a place for ``dotted``."""
    node: Any = config
    for part in dotted.split("."):
        if part not in getattr(type(node), "model_fields", {}):
            return False
        node = getattr(node, part)
    return True
