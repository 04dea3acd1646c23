"""What an evaluation result may contain, checked in the container and again on the host.

``normalize_result`` turns an evaluator's return value (a dict, or anything with ``metrics`` and
``artifacts`` such as OpenEvolve's ``EvaluationResult``) into plain ``(metrics, artifacts)``:

- metrics are bool, int or float, and must be finite (NaN/inf make the result invalid, so a
  forged ``combined_score: nan`` never sorts anywhere);
- a string metric is kept only for error-like keys (``error``, ``*_error``, ``failure_reason``);
  other strings, lists and dicts move to artifacts (as SkyDiscover's container wrapper does);
- artifacts are strings, each capped, with NUL bytes and lone surrogates made printable;
- at most :data:`MAX_METRICS` metrics, keys of at most :data:`MAX_KEY` characters.
"""

from __future__ import annotations

import math

from galapagos_sandbox import jsonc

# typing costs milliseconds of container start-up; annotations are strings anyway.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "MAX_ARTIFACT_CHARS",
    "ResultError",
    "clean_text",
    "is_error_key",
    "normalize_result",
    "tail",
]

MAX_METRICS = 256
MAX_KEY = 128
MAX_ARTIFACT_CHARS = 32 * 1024
MAX_ARTIFACTS_TOTAL = 256 * 1024
MAX_ERROR_CHARS = 8 * 1024
_ERROR_KEYS = frozenset({"error", "failure_reason", "reason"})


class ResultError(ValueError):
    """The evaluator's return value breaks the result schema."""


def is_error_key(key: str) -> bool:
    return key in _ERROR_KEYS or key.endswith("_error")


def clean_text(text: str) -> str:
    """Text safe to store and show: no NUL, no lone surrogates."""
    if "\x00" in text:
        text = text.replace("\x00", "\\x00")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def tail(text: str, limit: int) -> str:
    """The last ``limit`` characters, marked when something was cut."""
    if len(text) <= limit:
        return text
    cut = len(text) - limit
    return f"[... {cut} characters cut ...]\n" + text[-limit:]


def _number(key: str, value: Any) -> bool | int | float | None:
    t = type(value)
    if t is bool:
        return value
    if t is int or t is float:
        number = value
    elif (
        t.__module__ == "numpy"
        and getattr(value, "ndim", None) == 0
        and getattr(getattr(value, "dtype", None), "kind", "?") in "biuf"
    ):
        kind = value.dtype.kind
        if kind == "b":
            return bool(value)
        number = int(value) if kind in "iu" else float(value)
    else:
        return None
    try:
        as_float = float(number)
    except OverflowError:
        raise ResultError(f"metric {key!r} is too large to be a number") from None
    if not math.isfinite(as_float):
        raise ResultError(f"metric {key!r} is not finite ({as_float})")
    return number


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", "replace")
    try:
        text = jsonc.dumps(value, separators=(", ", ": "), default=_json_default)
        return text[:MAX_ARTIFACT_CHARS]
    except (TypeError, ValueError, RecursionError):
        return repr(value)[:MAX_ARTIFACT_CHARS]


def _json_default(value: Any) -> Any:
    tolist = getattr(value, "tolist", None)
    if callable(tolist) and type(value).__module__ == "numpy":
        return tolist()
    raise TypeError(type(value).__name__)


def _split(value: Any) -> tuple[Any, Any]:
    if isinstance(value, dict):
        metrics = dict(value)
        extra = metrics.pop("artifacts", None)
        return metrics, extra if isinstance(extra, dict) else {}
    metrics = getattr(value, "metrics", None)
    if isinstance(metrics, dict):
        artifacts = getattr(value, "artifacts", None)
        return dict(metrics), dict(artifacts) if isinstance(artifacts, dict) else {}
    raise ResultError(
        f"the evaluator returned {type(value).__name__}; expected a dict of metrics or an "
        "EvaluationResult(metrics, artifacts)"
    )


def normalize_result(value: Any) -> tuple[dict[str, Any], dict[str, str]]:
    """(metrics, artifacts) from an evaluator's return value; raises :class:`ResultError`."""
    raw_metrics, raw_artifacts = _split(value)
    if len(raw_metrics) > MAX_METRICS:
        raise ResultError(f"{len(raw_metrics)} metrics (at most {MAX_METRICS})")
    metrics: dict[str, Any] = {}
    moved: dict[str, Any] = {}
    for key, val in raw_metrics.items():
        if type(key) is not str or not key or len(key) > MAX_KEY:
            raise ResultError(f"metric name {key!r:.40} is not a short string")
        if val is None:
            continue
        number = _number(key, val)
        if number is not None:
            metrics[key] = number
        elif isinstance(val, str) and is_error_key(key):
            metrics[key] = clean_text(tail(val, MAX_ERROR_CHARS))
        else:
            moved[key] = val
    artifacts: dict[str, str] = {}
    total = 0
    for key, val in [*raw_artifacts.items(), *moved.items()]:
        if type(key) is not str or not key or len(key) > MAX_KEY:
            raise ResultError(f"artifact name {key!r:.40} is not a short string")
        text = clean_text(tail(_as_text(val), MAX_ARTIFACT_CHARS))
        total += len(text)
        if total > MAX_ARTIFACTS_TOTAL:
            artifacts["artifacts_truncated"] = "true"
            break
        artifacts[key] = text
    return metrics, artifacts
