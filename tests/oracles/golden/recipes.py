"""Recipes for golden traces (see ../README.md): each function drives reference code imported
from the snapshot on ``sys.path`` and returns plain data.  Add a function per trace."""

from __future__ import annotations

from typing import Any


def snapshot_identity() -> dict[str, Any]:
    """Which reference is on the path (a smoke recipe for the recorder itself)."""
    import skydiscover

    return {"module": skydiscover.__name__, "has_adaevolve": _has("skydiscover.search.adaevolve")}


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None
