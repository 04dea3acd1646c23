"""The store's JSON columns: ``dumps`` writes what ``json.dumps`` with the store's options
writes (it calls the C encoder straight), and a value that contains itself still fails."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from harness.store import _sql
from harness.store._sql import dumps


def _reference(value: Any) -> str:
    def default(item: Any) -> Any:
        if hasattr(item, "item"):
            return item.item()
        if isinstance(item, set | frozenset | tuple):
            return list(item)
        raise TypeError(type(item).__name__)

    return json.dumps(value, separators=(",", ":"), default=default)


VALUES: list[Any] = [
    None,
    True,
    0,
    -(10**30),
    1.5,
    -0.0,
    1.25e-300,
    float("nan"),
    float("inf"),
    "plain",
    'é\u2028"\\\n',
    [1, (2, 3), [], {}],
    {"a": {"b": [None, 2.5]}, 3: "int key", True: 1, None: 0, 1.5: "float key"},
    {"numpy": [np.float64(0.1), np.int64(3), np.bool_(True)], "set": {7}},
]


@pytest.mark.parametrize("c_encoder", [True, False])
def test_dumps_writes_what_json_dumps_writes(
    c_encoder: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not c_encoder:  # a Python without the C encoder takes the encoder's own path
        monkeypatch.setattr(_sql, "_C_ENCODE", None)
    for value in VALUES:
        assert dumps(value) == _reference(value)
    with pytest.raises(TypeError, match="not JSON-serialisable: object"):
        dumps({"x": object()})


def test_a_value_that_contains_itself_fails() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(RecursionError):
        dumps(loop)
