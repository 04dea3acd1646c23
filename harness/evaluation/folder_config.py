"""A compat task folder's own config (OpenEvolve's ``config.yaml``/``config_phase_N.yaml``,
SkyDiscover's ``config.yaml``): what of it the task keeps, what becomes search defaults, and
what is named as not used.

- **Task-level keys** apply to the task: the system message (``prompt.system_message``; in
  SkyDiscover's format a relative file name on one line is read from the folder), the evaluator
  timeout, cascade on/off and thresholds, the language and file suffix.
- **Search-level keys** with a clear equivalent become a config layer placed between the
  scaffold's composition and the user's ``--config``/``--set``/flags: ``max_iterations``, the
  models and endpoint, diff vs rewrite, the solution length cap, the LLM's timeout and retries,
  the random seed.  A mapped key the chosen scaffold's blocks do not have is not used.
- **Every other key** is listed, to be named in one note line: never silently dropped.

The format is told by its keys (``search``/``diff_based_generation``/``max_solution_length``:
SkyDiscover; ``database``/``diff_based_evolution``/``max_code_length``: OpenEvolve); a file with
neither's keys is an unknown format, and a malformed file an error with file, line and column.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from harness.core.errors import TaskError

__all__ = ["FolderConfig", "find_folder_config", "read_folder_config"]

Format = Literal["openevolve", "skydiscover"]

OPENEVOLVE_THRESHOLDS = (0.5, 0.75, 0.9)
SKYDISCOVER_THRESHOLDS = (0.3, 0.6)

_OE_ONLY = {"database", "diff_based_evolution", "max_code_length", "evolution_trace",
            "enforce_evolve_blocks", "diff_pattern", "early_stopping_patience",
            "convergence_threshold", "early_stopping_metric", "max_tasks_per_child"}  # fmt: skip
_SD_ONLY = {"search", "diff_based_generation", "max_solution_length", "agentic", "monitor",
            "human_feedback_enabled", "human_feedback_file", "human_feedback_mode"}  # fmt: skip
_COMMON = {"max_iterations", "checkpoint_interval", "log_level", "log_dir", "random_seed",
           "language", "file_suffix", "llm", "prompt", "evaluator"}  # fmt: skip
#: Per-model keys of the reference formats that have an equivalent in ``llm.models[]``.
_MODEL_KEYS = {"name": "name", "weight": "weight", "temperature": "temperature",
               "top_p": "top_p", "max_tokens": "max_tokens"}  # fmt: skip


@dataclass
class FolderConfig:
    """What a folder's config file says, sorted into what applies where."""

    path: Path
    format: Format
    system_message: str | None = None
    timeout_s: float | None = None
    #: ``None``: the file does not say (cascade follows the evaluator's stage functions).
    cascade: bool | None = None
    thresholds: tuple[float, ...] | None = None
    language: str | None = None
    file_suffix: str | None = None
    #: Search defaults as dotted keys of the run config (``general.max_iterations`` …).
    search: dict[str, Any] = field(default_factory=dict)
    #: Dotted keys of the file that have no equivalent here.
    ignored: list[str] = field(default_factory=list)

    @property
    def default_thresholds(self) -> tuple[float, ...]:
        return OPENEVOLVE_THRESHOLDS if self.format == "openevolve" else SKYDISCOVER_THRESHOLDS

    def task_keys(self) -> list[str]:
        """The file's keys the task applies (for ``task check`` and notes)."""
        keys = []
        if self.system_message is not None:
            keys.append("prompt.system_message")
        if self.timeout_s is not None:
            keys.append("evaluator.timeout")
        if self.cascade is not None:
            keys.append("evaluator.cascade_evaluation")
        if self.thresholds is not None:
            keys.append("evaluator.cascade_thresholds")
        if self.language is not None:
            keys.append("language")
        if self.file_suffix is not None:
            keys.append("file_suffix")
        return keys


def find_folder_config(folder: Path, name: str | None = None) -> Path | None:
    """The folder's config file: ``name`` if given (an error if missing), else
    ``config.yaml`` when present."""
    if name is not None:
        path = (folder / name) if not Path(name).is_absolute() else Path(name)
        if not path.is_file():
            choices = ", ".join(sorted(p.name for p in folder.glob("config*.y*ml"))) or "none"
            raise TaskError(
                f"{folder}: no config file {name!r} in the task folder (its config files: "
                f"{choices})"
            )
        return path
    default = folder / "config.yaml"
    return default if default.is_file() else None


def _read(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise TaskError(f"malformed YAML in {path}{where}: {problem}") from exc
    except OSError as exc:
        raise TaskError(f"cannot read {path}: {exc.strerror}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise TaskError(f"{path}: expected a mapping of config sections, got {type(data).__name__}")
    return data


def _leaves(data: Mapping[str, Any], prefix: str = "") -> Iterator[str]:
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            yield from _leaves(value, dotted + ".")
        else:
            yield dotted


def _format(path: Path, data: Mapping[str, Any]) -> Format:
    keys = set(data)
    oe, sd = keys & _OE_ONLY, keys & _SD_ONLY
    if sd and not oe:
        return "skydiscover"
    if oe and not sd:
        return "openevolve"
    if oe and sd:
        raise TaskError(
            f"{path}: mixes OpenEvolve keys ({', '.join(sorted(oe))}) and SkyDiscover keys "
            f"({', '.join(sorted(sd))}); keep one format"
        )
    if keys and keys <= _COMMON:
        return "openevolve"  # only keys both formats share: they mean the same in both
    unknown = sorted(keys - _COMMON)
    raise TaskError(
        f"{path}: not an OpenEvolve or SkyDiscover config (unknown top-level keys: "
        f"{', '.join(unknown) or '(none)'}); pass the folder's config with --task-config"
    )


def _system_message(value: Any, folder: Path, fmt: Format) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    text = value
    # SkyDiscover: a short single line naming a file next to the YAML is that file's text.
    if fmt == "skydiscover" and "\n" not in text.strip() and len(text) < 256:
        candidate = folder / text.strip()
        if candidate.is_file() and candidate.resolve().is_relative_to(folder.resolve()):
            return candidate.read_text()
    return text


def read_folder_config(path: Path) -> FolderConfig:
    """Parse and sort one folder config file (see the module docstring)."""
    data = _read(path)
    fmt = _format(path, data)
    out = FolderConfig(path=path, format=fmt)
    used: set[str] = set()

    def take(dotted: str) -> Any:
        node: Any = data
        for part in dotted.split("."):
            if not isinstance(node, Mapping) or part not in node:
                return None
            node = node[part]
        used.add(dotted)
        return node

    prompt_sm = take("prompt.system_message")
    out.system_message = _system_message(prompt_sm, path.parent, fmt)
    timeout = take("evaluator.timeout")
    if isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0:
        out.timeout_s = float(min(timeout, 3600))
    cascade = take("evaluator.cascade_evaluation")
    if isinstance(cascade, bool):
        out.cascade = cascade
    thresholds = take("evaluator.cascade_thresholds")
    if isinstance(thresholds, list) and all(
        isinstance(t, int | float) and not isinstance(t, bool) for t in thresholds
    ):
        out.thresholds = tuple(float(t) for t in thresholds)
    language = take("language")
    if isinstance(language, str) and language:
        out.language = language
    suffix = take("file_suffix")
    if isinstance(suffix, str) and suffix:
        out.file_suffix = suffix

    search = out.search
    iterations = take("max_iterations")
    if isinstance(iterations, int) and not isinstance(iterations, bool):
        search["general.max_iterations"] = iterations
    seed = take("random_seed")
    if isinstance(seed, int) and not isinstance(seed, bool) and seed >= 0:
        search["seed"] = seed
    diff_key = "diff_based_evolution" if fmt == "openevolve" else "diff_based_generation"
    diff = take(diff_key)
    if isinstance(diff, bool):
        search["proposer.diff_based"] = diff
    length_key = "max_code_length" if fmt == "openevolve" else "max_solution_length"
    length = take(length_key)
    if isinstance(length, int) and not isinstance(length, bool):
        search["proposer.max_solution_length"] = length
    api_base = take("llm.api_base")
    if isinstance(api_base, str) and api_base and "${" not in api_base:
        search["llm.api_base"] = api_base
    llm_timeout = take("llm.timeout")
    if isinstance(llm_timeout, int | float) and not isinstance(llm_timeout, bool):
        search["llm.timeout_s"] = float(llm_timeout)
    retries = take("llm.retries")
    if isinstance(retries, int) and not isinstance(retries, bool):
        search["llm.retries"] = retries
    models = take("llm.models")
    if isinstance(models, list):
        shared = {k: v for k, v in (data.get("llm") or {}).items() if k in _MODEL_KEYS}
        for key in shared:
            used.add(f"llm.{key}")
        converted = []
        for model in models:
            if isinstance(model, Mapping) and isinstance(model.get("name"), str):
                item = {_MODEL_KEYS[k]: v for k, v in {**shared, **model}.items()
                        if k in _MODEL_KEYS and v is not None}  # fmt: skip
                converted.append(item)
        if converted:
            search["llm.models"] = converted
    out.ignored = [
        key for key in _leaves(data) if key not in used and not key.startswith("llm.models")
    ]
    # Model entries' own keys without an equivalent (api_key never: secrets stay in the env).
    for n, model in enumerate(models if isinstance(models, list) else []):
        if isinstance(model, Mapping):
            out.ignored += [f"llm.models[{n}].{k}" for k in model if k not in _MODEL_KEYS]
    return out
