"""A YAML mapping that remembers where each of its values is, so an error about a value can
name the file, line and column (``path at line 3, column 12: evaluator.timeout: …``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from harness.core.errors import TaskError

__all__ = ["LocatedYaml"]


class LocatedYaml:
    """A parsed YAML file of config sections and the position of each value."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            text = path.read_text()
        except OSError as exc:
            raise TaskError(f"cannot read {path}: {exc.strerror}") from exc
        try:
            self.node = yaml.compose(text, Loader=yaml.SafeLoader)
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
            problem = getattr(exc, "problem", None) or "invalid YAML"
            raise TaskError(f"malformed YAML in {path}{where}: {problem}; fix the file") from exc
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise self.error(
                "", f"expected a mapping of config sections, got {type(data).__name__}"
            )
        self.data: dict[str, Any] = data

    def where(self, dotted: str, *, at_key: bool = False) -> str:
        """``path at line L, column C`` of the value at ``dotted`` (``a.b[2].c``), or of its key;
        just ``path`` when there is no such value."""
        node: Any = self.node
        key_node: Any = None
        for part in _parts(dotted):
            if isinstance(node, yaml.MappingNode):
                key_node, node = next(
                    ((k, v) for k, v in node.value if k.value == part), (None, None)
                )
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
                key_node = node = node.value[part] if part < len(node.value) else None
            else:
                node = None
            if node is None:
                return str(self.path)
        located = key_node if at_key and key_node is not None else node
        if located is None:
            return str(self.path)
        mark = located.start_mark
        return f"{self.path} at line {mark.line + 1}, column {mark.column + 1}"

    def error(self, dotted: str, message: str, *, at_key: bool = False) -> TaskError:
        """A one-line error about the value at ``dotted``, naming where it is."""
        key = f"{dotted}: " if dotted else ""
        return TaskError(f"{self.where(dotted, at_key=at_key)}: {key}{message}")


def _parts(dotted: str) -> Iterator[str | int]:
    for part in dotted.split(".") if dotted else ():
        name, _, rest = part.partition("[")
        if name:
            yield name
        for index in re.findall(r"(\d+)\]", "[" + rest if rest else ""):
            yield int(index)
