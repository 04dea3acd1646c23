"""The runtime's JSON (``_json`` called directly) against the ``json`` package it replaces."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
from galapagos_sandbox import jsonc

import harness.sandbox  # noqa: F401  (puts galapagos_sandbox on sys.path)
from harness.sandbox._runtime import RUNTIME_DIR

VALUES = [
    None,
    True,
    0,
    -(10**40),
    1.5,
    1e-320,
    float("inf"),
    float("-inf"),
    "",
    "plain",
    'quote " backslash \\ newline \n tab \t nul \0',
    "é ☃ 𝄞 \ud800",
    [],
    {},
    [1, [2, [3, {"a": None}]]],
    {"b": 1, "a": [1.0, "x"], "é": {"": False}},
    (1, 2),
]


@pytest.mark.parametrize("value", VALUES, ids=repr)
@pytest.mark.parametrize("ensure_ascii", [True, False])
@pytest.mark.parametrize("sort_keys", [True, False])
def test_dumps_writes_what_json_writes(value: object, ensure_ascii: bool, sort_keys: bool) -> None:
    expected = json.dumps(
        value, separators=(",", ":"), ensure_ascii=ensure_ascii, sort_keys=sort_keys
    )
    assert jsonc.dumps(value, ensure_ascii=ensure_ascii, sort_keys=sort_keys) == expected
    pretty = json.dumps(value, sort_keys=sort_keys)
    assert jsonc.dumps(value, separators=(", ", ": "), sort_keys=sort_keys) == pretty


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_loads_reads_what_json_reads(value: object) -> None:
    for text in (json.dumps(value), json.dumps(value, indent=2), f" \n{json.dumps(value)}\t\r\n"):
        expected, got = json.loads(text), jsonc.loads(text)
        assert repr(got) == repr(expected)  # repr: NaN-safe and type-exact
        assert jsonc.loads(text.encode("utf-8")) == got or got != got


def test_nan_round_trips_and_can_be_refused() -> None:
    assert math.isnan(jsonc.loads(jsonc.dumps(float("nan"))))
    with pytest.raises(ValueError):
        jsonc.dumps(float("nan"), allow_nan=False)


@pytest.mark.parametrize(
    "text",
    ["", "   ", "{", "[1,]", "{'a': 1}", "1 2", '{"a": 1} x', "nul", '"\x01"', "[1]]", "\ufeff1"],
)
def test_loads_refuses_what_json_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        jsonc.loads(text)


def test_malformed_text_is_a_value_error_before_anything_imported_json() -> None:
    """In a fresh interpreter (as in a container: nothing has imported ``json``), Python
    3.11's scanner fails most syntax errors with SystemError; they must still be ValueErrors."""
    bad = ['{"a" 1}', "{", "[1 2]", '"abc', '"\\q', '{"a":1,}', '"\x01"', "[1,]", "1 2"]
    code = (
        "import sys\n"
        f"sys.path.insert(0, {str(RUNTIME_DIR)!r})\n"
        "from galapagos_sandbox import jsonc\n"
        "assert 'json' not in sys.modules\n"
        f"for text in {bad!r}:\n"
        "    try:\n"
        "        jsonc.loads(text)\n"
        "    except ValueError as exc:\n"
        "        print(type(exc).__name__)\n"
    )
    out = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["JSONDecodeError"] * len(bad), out.stderr


def test_loads_refuses_bad_utf8_and_deep_nesting() -> None:
    with pytest.raises(ValueError):
        jsonc.loads(b'"\xff"')
    with pytest.raises(RecursionError):
        jsonc.loads("[" * 100_000 + "]" * 100_000)


def test_dumps_refuses_cycles_and_unknown_types_unless_given_a_default() -> None:
    cyclic: list[object] = []
    cyclic.append(cyclic)
    with pytest.raises(ValueError, match="Circular"):
        jsonc.dumps(cyclic)
    with pytest.raises(TypeError, match="set"):
        jsonc.dumps({1, 2})
    assert jsonc.dumps({1}, default=sorted) == "[1]"


def test_the_runner_starts_without_json_re_enum_or_threading() -> None:
    """What this module (and ``_signal``/``_thread`` elsewhere) is for: every container's
    runner start-up skips those imports (each costs milliseconds of CPU per container)."""
    code = (
        "import sys, galapagos_sandbox.runner; "
        "print(sorted({'json', 're', 'enum', 'threading', 'signal', 'typing', 'contextlib'}"
        " & set(sys.modules)))"
    )
    out = subprocess.run(
        [
            sys.executable,
            "-I",
            "-S",
            "-c",
            f"import sys; sys.path.insert(0, {str(RUNTIME_DIR)!r}); {code}",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "[]"
