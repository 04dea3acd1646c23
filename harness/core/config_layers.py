"""One config pipeline: a run's config as ordered, named layers, each value's source nameable.

A run's config is built from these layers, lowest priority first (:data:`KINDS`):

1. ``scaffold`` — the scaffold's composition and defaults (``scaffolds/<name>/config.yaml`` or
   a user's composition file);
2. ``task`` — the task's own defaults (its ``task.yaml`` system message; a compat folder's
   config file, its search-level keys translated to ours);
3. ``config`` — the user's config file (the CLI's ``--config``; the Python API's ``config=``);
4. ``set`` — one layer per ``key=value`` override (the CLI's ``--set``);
5. ``flag`` — one layer per keyword setting (the CLI's ``--iterations``, ``--seed`` …; the
   Python API's ``iterations=``, ``seed=``).

Each :class:`Layer` has a name (a file, ``--set a.b=1``, a flag) given by whoever made it, so
the library never spells a CLI flag itself: callers name their settings (:data:`Names`).  A
file layer remembers the line of each of its keys, so a value is traced to ``file:line``
(:meth:`Layers.source_of`), an invalid one is reported there, and ``galapagos run
--explain-config`` lists every leaf of the final config with its source (:func:`explain`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from harness.core.config import (
    RunConfig,
    deep_merge,
    nest,
    override_patch,
    read_yaml,
    shown_override,
    validate_config,
)

__all__ = [
    "DEFAULT",
    "KINDS",
    "Layer",
    "Layers",
    "Names",
    "explain",
    "file_layer",
    "leaves",
    "named",
    "set_layers",
    "setting_layers",
    "yaml_lines",
]

#: The layer kinds, lowest priority first.
KINDS = ("scaffold", "task", "config", "set", "flag")
#: The source of a value no layer sets: the config model's default.
DEFAULT = "default"
#: How a caller names its keyword settings in messages (``{"seed": "--seed"}`` for the CLI);
#: a setting it does not name is named by its keyword.
Names = Mapping[str, str]


_YAML_HINT = (
    " (an override's value is read as YAML: quote text that has ': ' or starts with a symbol)"
)


def named(names: Names | None, keyword: str) -> str:
    """How the caller calls its setting ``keyword``."""
    return (names or {}).get(keyword, keyword)


@dataclass(frozen=True)
class Layer:
    """One named source of config values."""

    kind: str
    #: How messages name it: a file's path, ``--set a.b=1``, ``--seed``.
    name: str
    data: Mapping[str, Any]
    #: The line of each dotted key of a file layer.
    lines: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"layer kind {self.kind!r} is not one of {', '.join(KINDS)}")

    def sets(self, dotted: str) -> bool:
        """Whether this layer gives a value at ``dotted`` (or replaces one of its parents)."""
        return _sets(self.data, dotted.split("."))

    def where(self, dotted: str) -> str:
        """``name:line`` of ``dotted`` (or of its nearest parent the file has), else ``name``."""
        parts = dotted.split(".")
        for end in range(len(parts), 0, -1):
            line = self.lines.get(".".join(parts[:end]))
            if line is not None:
                return f"{self.name}:{line}"
        return self.name


def _sets(data: Any, parts: Sequence[Any]) -> bool:
    for part in parts:
        if not isinstance(data, Mapping):
            return True  # a parent set to a scalar replaces the whole subtree
        if part not in data:
            return False
        data = data[part]
    return True


def yaml_lines(text: str) -> dict[str, int]:
    """The 1-based line of every dotted key of a YAML mapping (lists are leaves)."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return {}
    out: dict[str, int] = {}

    def walk(node: Any, prefix: str) -> None:
        if not isinstance(node, yaml.MappingNode):
            return
        for key, value in node.value:
            dotted = f"{prefix}{key.value}"
            out[dotted] = key.start_mark.line + 1
            walk(value, dotted + ".")

    walk(node, "")
    return out


def file_layer(kind: str, path: Path, *, drop: Sequence[str] = ()) -> Layer:
    """A YAML file as a layer (its top-level keys ``drop`` left out), lines remembered."""
    data = {k: v for k, v in read_yaml(path).items() if k not in drop}
    return Layer(kind, str(path), data, yaml_lines(path.read_text()))


def set_layers(items: Sequence[str], names: Names | None = None) -> list[Layer]:
    """One layer per ``key.sub=value`` item (malformed items are one-line errors), named by
    the caller's word for an override (``names["set"]``: the CLI's ``--set``)."""
    word = named(names, "set")
    return [Layer("set", shown_override(item, word), override_patch(item, word)) for item in items]


def setting_layers(values: Mapping[str, Any], names: Mapping[str, str] | None) -> list[Layer]:
    """One ``flag`` layer per dotted key of ``values`` that is not ``None``, named by
    ``names`` (dotted key → the caller's name of the setting; unnamed: ``settings``)."""
    return [
        Layer("flag", (names or {}).get(key, "settings"), nest(key, value))
        for key, value in values.items()
        if value is not None
    ]


class Layers(Sequence[Layer]):
    """Layers in priority order (lowest first); kinds must come in :data:`KINDS` order."""

    def __init__(self, layers: Sequence[Layer] = ()) -> None:
        self._layers = list(layers)
        ranks = [KINDS.index(layer.kind) for layer in self._layers]
        if ranks != sorted(ranks):
            raise ValueError("config layers out of order: " + ", ".join(KINDS))

    def __getitem__(self, index: Any) -> Any:
        return self._layers[index]

    def __len__(self) -> int:
        return len(self._layers)

    def __iter__(self) -> Iterator[Layer]:
        return iter(self._layers)

    def of(self, *kinds: str) -> Layers:
        return Layers([layer for layer in self._layers if layer.kind in kinds])

    def merged(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        for layer in self._layers:
            data = deep_merge(data, layer.data)
        return data

    def source_of(self, dotted: str) -> Layer | None:
        """The highest-priority layer that sets ``dotted``."""
        return next((layer for layer in reversed(self._layers) if layer.sets(dotted)), None)

    def validate(self, model: type[RunConfig], **fixed: Any) -> RunConfig:
        """The merged layers (plus ``fixed`` top-level values) validated by ``model``; an
        invalid value is reported against the layer (``file:line``) it came from."""
        data = {**self.merged(), **fixed}
        return validate_config(model, data, source=self._origin)

    def _origin(self, loc: Sequence[Any], text: str) -> tuple[str, str]:
        """Where the problem at ``loc`` comes from, and its text (with a hint on quoting for
        an override's value of the wrong type)."""
        dotted = ".".join(str(part) for part in loc if not isinstance(part, int))
        layer = self.source_of(dotted) if dotted else None
        if layer is None:
            return (self._layers[0].where(dotted) if self._layers else "config"), text
        if layer.kind == "set" and "Input should be a valid" in text:
            text += _YAML_HINT
        return layer.where(dotted), text

    def replaced(self, keys: Sequence[str]) -> list[str]:
        """A note for each value of a ``config``/``set`` layer that a ``flag`` layer replaced
        with another value (``keys``: the dotted keys flags may set)."""
        notes = []
        for key in keys:
            top = self.source_of(key)
            if top is None or top.kind != "flag":
                continue
            value = _get(top.data, key)
            for layer in self.of("config", "set"):
                theirs = _get(layer.data, key)
                if theirs is not None and theirs != value:
                    notes.append(
                        f"{key}: {theirs!r} from {layer.where(key)} overridden by "
                        f"{top.name} {value}"
                    )
        return notes


def _get(data: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        data = data.get(part) if isinstance(data, Mapping) else None
    return data


def leaves(data: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """``(dotted key, value)`` of every leaf of nested mappings (lists and empty mappings are
    leaves)."""
    if isinstance(data, Mapping) and data:
        for key, value in data.items():
            yield from leaves(value, f"{prefix}{key}." if prefix or key else "")
    elif prefix:
        yield prefix[:-1], data


def explain(
    config: BaseModel | Mapping[str, Any],
    layers: Layers,
    derived: Mapping[str, str] | None = None,
    *,
    default: str = DEFAULT,
) -> list[tuple[str, Any, str]]:
    """Every leaf of ``config`` with its value and its source: ``derived[key]`` when a step
    after the layers set it (the endpoint's resolution …), else the layer that sets it
    (``file:line`` for a file), else ``default`` (the config model's default)."""
    data = config.model_dump(mode="json") if isinstance(config, BaseModel) else config
    out = []
    for key, value in leaves(data):
        source = _derived(key, derived or {})
        if source is None:
            layer = layers.source_of(key)
            source = layer.where(key) if layer is not None else default
        out.append((key, value, source))
    return out


def _derived(key: str, derived: Mapping[str, str]) -> str | None:
    parts = key.split(".")
    for end in range(len(parts), 0, -1):
        found = derived.get(".".join(parts[:end]))
        if found is not None:
            return found
    return None
