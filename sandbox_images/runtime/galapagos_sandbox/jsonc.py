"""JSON through CPython's C accelerator (``_json``), without importing the ``json`` package.

Every sandbox container starts a runner, and ``import json`` is a large share of its start-up
CPU: the package compiles regular expressions at import, which pulls in ``re`` and ``enum``
(≈ 15 ms of CPU per container on a 2-core machine).  The parser and the encoder that
``json.loads``/``json.dumps`` use are the ``_json`` C functions anyway; this module calls them
directly with the same settings, so the text accepted and produced is the same
(``tests/sandbox/test_jsonc.py`` checks that against ``json``).  Where ``_json`` is missing (an
interpreter without the accelerator), it falls back to the ``json`` package.
"""

from __future__ import annotations

# typing costs milliseconds of container start-up; annotations are strings anyway.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["dumps", "loads"]

_WHITESPACE = " \t\n\r"
_CONSTANTS = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


def _no_default(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


class _ScannerSettings:
    """What ``_json.make_scanner`` reads: the defaults of ``json.loads``."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = _CONSTANTS.__getitem__


try:
    from _json import encode_basestring, encode_basestring_ascii, make_encoder, make_scanner
except ImportError:  # pragma: no cover - every CPython we ship has the accelerator
    make_encoder = _scan = None
else:
    _scan = make_scanner(_ScannerSettings())


def dumps(
    value: Any,
    *,
    separators: tuple[str, str] = (",", ":"),
    sort_keys: bool = False,
    ensure_ascii: bool = True,
    allow_nan: bool = True,
    default: Callable[[Any], Any] | None = None,
) -> str:
    """``json.dumps(value, ...)``, compact unless ``separators`` say otherwise; circular
    references are refused (ValueError), unknown types go to ``default`` (TypeError without
    one)."""
    if make_encoder is None:  # pragma: no cover
        import json

        return json.dumps(
            value,
            separators=separators,
            sort_keys=sort_keys,
            ensure_ascii=ensure_ascii,
            allow_nan=allow_nan,
            default=default,
        )
    item_separator, key_separator = separators
    encode = make_encoder(
        {},  # markers: detects circular references, as json's check_circular=True
        default or _no_default,
        encode_basestring_ascii if ensure_ascii else encode_basestring,
        None,  # indent
        key_separator,
        item_separator,
        sort_keys,
        False,  # skipkeys
        allow_nan,
    )
    return "".join(encode(value, 0))


def loads(text: str | bytes | bytearray) -> Any:
    """``json.loads(text)`` for one JSON document; bytes must be UTF-8 (json would also
    accept UTF-16/32 and a BOM; no frame carries those).  Anything else raises what
    ``json.loads`` raises (``json.JSONDecodeError``, a ValueError)."""
    if _scan is None:  # pragma: no cover
        return _json_loads(text)
    if not isinstance(text, str):
        text = bytes(text).decode("utf-8")
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _scan(text, start)
    except (StopIteration, SystemError):
        # Not JSON.  Python 3.11's scanner reports most syntax errors through json.decoder
        # and raises SystemError when that module is not loaded: let json say what is wrong
        # (the error path only pays for importing it).
        return _json_loads(text)
    if end != len(text.rstrip(_WHITESPACE)):
        return _json_loads(text)  # "Extra data"
    return value


def _json_loads(text: str) -> Any:
    import json

    return json.loads(text)
