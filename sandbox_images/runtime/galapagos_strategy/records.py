"""Wire records → ``Program`` objects, and a strategy's ``sample`` answer → ids and label tokens.

Label texts travel as tokens: ``""`` (no label), ``"@diverge"`` and ``"@refine"`` stand for the
run's DIVERGE/REFINE texts, which can be kilobytes long; any other label comes back as
``"?" + text`` so the host can name it when it rejects the answer.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = [
    "InvalidAnswer",
    "label_text",
    "label_token",
    "normalize_answer",
    "plain_metrics",
    "to_program",
]

DIVERGE, REFINE = "@diverge", "@refine"
_LABEL_SHOWN = 200


class InvalidAnswer(ValueError):
    """The strategy's ``sample`` returned something that is not a well-formed answer."""


def label_text(token: str | None, labels: dict[str, str]) -> str:
    if token == DIVERGE:
        return labels.get("diverge", "")
    if token == REFINE:
        return labels.get("refine", "")
    return token or ""


def label_token(label: Any, labels: dict[str, str]) -> str:
    if not isinstance(label, str):
        raise InvalidAnswer(f"a label must be a str, got {type(label).__name__}")
    if label == "":
        return ""
    if label == labels.get("diverge"):
        return DIVERGE
    if label == labels.get("refine"):
        return REFINE
    return "?" + label[:_LABEL_SHOWN]


def to_program(record: dict[str, Any], cls: type, labels: dict[str, str]) -> Any:
    """Build a fresh program object; the strategy gets its own copies of every mutable field."""
    parent_info = record.get("parent_info")
    context_info = record.get("context_info")
    return cls(
        id=record["id"],
        solution=record.get("solution", ""),
        language=record.get("language", "python"),
        metrics=copy.deepcopy(record.get("metrics") or {}),
        iteration_found=record.get("iteration_found", 0),
        parent_id=record.get("parent_id"),
        other_context_ids=list(record["other_context_ids"])
        if record.get("other_context_ids") is not None
        else None,
        parent_info=(label_text(parent_info[0], labels), parent_info[1]) if parent_info else None,
        context_info=[(label_text(lab, labels), pid) for lab, pid in context_info]
        if context_info is not None
        else None,
        timestamp=float(record.get("timestamp", 0.0)),
        metadata=copy.deepcopy(record.get("metadata") or {}),
        artifacts=copy.deepcopy(record.get("artifacts") or {}),
        prompts=None,
        generation=record.get("generation", 0),
    )


def _plain(value: Any) -> Any:
    if value is None or type(value) in (bool, int, float, str):
        return value
    return {"repr": repr(value)[:_LABEL_SHOWN], "type": type(value).__name__}


def plain_metrics(metrics: Any) -> dict[str, Any]:
    """Metrics as the strategy holds them, in a form the wire carries: ``{"type": "dict",
    "items": {...}}`` with plain scalars as they are and anything else as ``{"repr", "type"}``;
    a non-dict as ``{"repr", "type"}`` alone.  Observations only: the host judges them."""
    if type(metrics) is not dict:
        return {"repr": repr(metrics)[:_LABEL_SHOWN], "type": type(metrics).__name__}
    return {"type": "dict", "items": {str(k): _plain(v) for k, v in metrics.items()}}


def _program_id(obj: Any, program_cls: type, where: str) -> str:
    if obj is None:
        raise InvalidAnswer(f"{where} is None")
    if not isinstance(obj, program_cls):
        raise InvalidAnswer(f"{where} is a {type(obj).__name__}, not a Program")
    pid: Any = getattr(obj, "id", None)
    if not isinstance(pid, str):
        raise InvalidAnswer(f"{where} has an id of type {type(pid).__name__}, not str")
    return pid


def normalize_answer(
    result: Any, program_cls: type, labels: dict[str, str]
) -> tuple[tuple[str, str], list[tuple[str, str]], list[Any]]:
    """``(parent token/id, [(token, id)…], returned objects)``; raises :class:`InvalidAnswer`.

    Accepts both documented forms: ``({label: parent}, {label: [programs]})`` and
    ``(parent, [programs])`` (plain form: every label is "").
    """
    if not isinstance(result, tuple) or len(result) != 2:
        shape = f"a tuple of {len(result)}" if isinstance(result, tuple) else type(result).__name__
        raise InvalidAnswer(f"sample() must return a 2-tuple (parent, context), got {shape}")
    parent_part, context_part = result
    if isinstance(parent_part, dict):
        if len(parent_part) != 1:
            raise InvalidAnswer(
                f"the parent dict must hold exactly one program, got {len(parent_part)}"
            )
        ((plabel, parent),) = parent_part.items()
    else:
        plabel, parent = "", parent_part
    objects = [parent]
    parent_ref = (label_token(plabel, labels), _program_id(parent, program_cls, "the parent"))
    if isinstance(context_part, dict):
        groups = list(context_part.items())
    elif isinstance(context_part, list):
        groups = [("", context_part)]
    else:
        raise InvalidAnswer(
            f"the context must be a dict of lists or a list, got {type(context_part).__name__}"
        )
    context = []
    for label, members in groups:
        if not isinstance(members, list):
            raise InvalidAnswer(
                f"context group {label!r} must be a list, got {type(members).__name__}"
            )
        token = label_token(label, labels)
        for i, obj in enumerate(members):
            context.append((token, _program_id(obj, program_cls, f"context program {i}")))
            objects.append(obj)
    return parent_ref, context, objects
