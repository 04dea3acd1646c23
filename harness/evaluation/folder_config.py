"""A compat task folder's own config (OpenEvolve's ``config.yaml``/``config_phase_N.yaml``,
SkyDiscover's ``config.yaml``): what of it the task keeps, what becomes search defaults, and
what is named as not used.

- **Task-level keys** apply to the task: the system message (``prompt.system_message``, read as
  the formats read it: the name of a prompt template of the folder's ``prompt.template_dir``
  or of the format, else literal text; SkyDiscover also reads a short single line naming a file
  of the folder), the evaluator timeout (and OpenEvolve's memory and CPU limits), cascade on/off
  and thresholds, the language and file suffix.  The format's own defaults apply where the file
  is silent (timeout: OpenEvolve 300 s, SkyDiscover 360 s; thresholds: ``[0.5, 0.75, 0.9]``,
  ``[0.3, 0.6]``), since that is what the folder's author ran with.
- **Search-level keys** with a clear equivalent become a config layer placed between the
  scaffold's composition and the user's ``--config``/``--set``/flags (see
  :meth:`FolderConfig.search`): ``max_iterations``, the seed, the models (OpenEvolve's
  ``primary_model``/``secondary_model`` too) and endpoint, diff vs rewrite, the solution length
  cap, the LLM's timeout and retries, AdaEvolve's per-iteration error retries.  A mapped key the
  chosen scaffold's blocks do not have is not used.
- **Every other key** is listed, to be named in one note line: never silently dropped.

The format is told by its keys (``search``/``diff_based_generation``/``max_solution_length``…:
SkyDiscover; ``diff_based_evolution``/``max_code_length``/``database``…: OpenEvolve).  A file in
neither format, a malformed file or a value of the wrong type is a one-line :class:`TaskError`
naming the file, line and column.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from harness.core.errors import TaskError
from harness.evaluation._located_yaml import LocatedYaml

__all__ = [
    "OPENEVOLVE_THRESHOLDS",
    "FolderConfig",
    "find_folder_config",
    "folder_config_files",
    "language_of",
    "read_folder_config",
]

Format = Literal["openevolve", "skydiscover"]

OPENEVOLVE_THRESHOLDS = (0.5, 0.75, 0.9)
_DEFAULTS: dict[str, dict[str, Any]] = {
    "openevolve": {"timeout": 300.0, "thresholds": OPENEVOLVE_THRESHOLDS},
    "skydiscover": {"timeout": 360.0, "thresholds": (0.3, 0.6)},
}
#: The wall-clock limit a sandboxed stage may have (``TaskLimits.wall_s``).
_MAX_TIMEOUT_S = 3600.0

_OE_ONLY = {"diff_based_evolution", "max_code_length", "evolution_trace", "enforce_evolve_blocks",
            "diff_pattern", "early_stopping_patience", "convergence_threshold",
            "early_stopping_metric", "max_tasks_per_child"}  # fmt: skip
_SD_ONLY = {"search", "diff_based_generation", "max_solution_length", "agentic", "monitor",
            "human_feedback_enabled", "human_feedback_file", "human_feedback_mode"}  # fmt: skip
#: OpenEvolve's population section; SkyDiscover's config has the field too (and ignores it).
_DATABASE = "database"
_COMMON = {"max_iterations", "checkpoint_interval", "log_level", "log_dir", "random_seed",
           "language", "file_suffix", "llm", "prompt", "evaluator"}  # fmt: skip

#: Prompt templates each format ships: a ``system_message`` naming one of them means the
#: format's generic text (ours is used instead), not literal text.
_TEMPLATES: dict[str, frozenset[str]] = {
    "openevolve": frozenset({
        "system_message", "evaluator_system_message", "diff_user", "full_rewrite_user",
        "evaluation", "evolution_history", "previous_attempt", "top_program",
        "inspirations_section", "inspiration_program", "system_message_changes_description",
        "system_message_with_changes_description", "user_message_with_changes_description",
    }),
    "skydiscover": frozenset({
        "system_message", "evaluator_system_message", "agentic_system_message", "diff_user",
        "full_rewrite_user", "full_rewrite_user_prompt_opt", "evaluation", "image_user",
        "previous_attempt",
    }),
}  # fmt: skip
#: SkyDiscover reads ``prompt.system_message`` as a file name when it is one line this short.
_SD_FILE_NAME_CHARS = 500

#: A one-line SkyDiscover system message that looks like a file name but names none is a mistake.
_FILE_NAME = re.compile(r"[\w./-]+\.(txt|md)")

#: Per-model keys of both formats with an equivalent in ``llm.models[]`` (top-level ``llm``
#: values apply to every model that does not set its own).
_MODEL_KEYS = ("temperature", "top_p", "max_tokens")
_LANGUAGES = {".py": "python", ".rs": "rust", ".r": "r", ".js": "javascript",
              ".ts": "typescript", ".cpp": "cpp", ".cc": "cpp", ".c": "c", ".go": "go",
              ".java": "java", ".jl": "julia"}  # fmt: skip


@dataclass
class FolderConfig:
    """What a folder's config file says, sorted into what applies where."""

    path: Path
    format: Format
    system_message: str | None = None
    #: Where the system message came from (``prompt.system_message``, a template file …).
    system_message_source: str = "prompt.system_message"
    timeout_s: float = 0.0
    memory_mb: int | None = None
    cpus: float | None = None
    #: ``False``: the folder turns its cascade off (``evaluate()`` alone).
    cascade: bool = True
    thresholds: tuple[float, ...] = ()
    language: str | None = None
    file_suffix: str | None = None
    #: Search defaults as dotted keys of the run config (``general.max_iterations`` …).
    search: dict[str, Any] = field(default_factory=dict)
    #: The file's key behind each search default (``general.max_iterations``: ``max_iterations``).
    origins: dict[str, str] = field(default_factory=dict)
    #: Keys of the file that have no equivalent here (dotted, as the file spells them).
    ignored: list[str] = field(default_factory=list)
    #: Task keys the file sets (the rest are the format's defaults), as the file spells them.
    task_keys: list[str] = field(default_factory=list)
    #: What was adjusted on the way in (a timeout above the sandbox's limit …).
    notes: list[str] = field(default_factory=list)

    def shown(self, key: str) -> str:
        """A search default as the notes show it: the file's key and ours (``max_iterations →
        general.max_iterations``)."""
        theirs = self.origins.get(key, key)
        return key if theirs == key else f"{theirs} → {key}"


def language_of(suffix: str) -> str | None:
    """The language of a program file suffix (``.rs`` → ``rust``), if we know it."""
    return _LANGUAGES.get(suffix.lower())


def folder_config_files(folder: Path) -> list[str]:
    """The config files of a folder (``config.yaml``, ``config_phase_1.yaml`` …)."""
    return sorted(p.name for p in folder.glob("config*.y*ml") if p.is_file())


def find_folder_config(folder: Path, name: str | None = None) -> Path | None:
    """The folder's config file: ``name`` if given (an error if missing), else
    ``config.yaml`` when present."""
    if name is not None:
        path = Path(name) if Path(name).is_absolute() else folder / name
        if not path.is_file():
            choices = ", ".join(folder_config_files(folder)) or "none"
            raise TaskError(
                f"{folder}: no config file {name!r} in the task folder (its config files: "
                f"{choices})"
            )
        return path
    default = folder / "config.yaml"
    return default if default.is_file() else None


def _leaves(data: Mapping[str, Any], prefix: str = "") -> Iterator[str]:
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping):
            yield from _leaves(value, dotted + ".")  # an empty section sets nothing
        else:
            yield dotted


def _format(file: LocatedYaml) -> Format:
    keys = set(file.data)
    oe, sd = keys & _OE_ONLY, keys & _SD_ONLY
    if oe and sd:
        first = next(k for k in file.data if k in sd)
        raise file.error(
            first,
            at_key=True,
            message=f"a SkyDiscover key in a file with OpenEvolve keys ({', '.join(sorted(oe))}); "
            "keep one format",
        )
    if sd:
        return "skydiscover"
    if oe or _DATABASE in keys:
        return "openevolve"
    unknown = [k for k in file.data if k not in _COMMON]
    if unknown:
        raise file.error(
            unknown[0],
            at_key=True,
            message=f"not an OpenEvolve or SkyDiscover config (unknown top-level key(s): "
            f"{', '.join(map(str, unknown))}); fix it, or choose the folder's config file "
            "with --task-config FILE",
        )
    return "openevolve"  # only keys both formats share: they mean the same in both


def _number(file: LocatedYaml, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise file.error(key, f"expected a positive number, got {value!r}")
    return float(value)


def _flag(file: LocatedYaml, key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise file.error(key, f"expected true or false, got {value!r}")
    return value


def _text(file: LocatedYaml, key: str, value: Any) -> str:
    if not isinstance(value, str):
        raise file.error(key, f"expected text, got {value!r}")
    return value


def _inside(folder: Path, path: Path) -> bool:
    return path.resolve().is_relative_to(folder.resolve())


def _is_file(path: Path) -> bool:
    """``path.is_file()`` for text that may not be a path at all (too long a name …)."""
    try:
        return path.is_file()
    except OSError:
        return False


class _Reader:
    """Walks one file, marking the keys it uses; whatever is left is named as not used."""

    def __init__(self, file: LocatedYaml, fmt: Format) -> None:
        self.file = file
        self.format = fmt
        self.folder = file.path.parent
        self.used: set[str] = set()
        #: Keys of model entries that have no equivalent (``llm.models[0].api_key`` …).
        self.extra: list[str] = []
        #: Values adjusted on the way in, said when the run starts.
        self.notes: list[str] = []

    def get(self, dotted: str) -> Any:
        node: Any = self.file.data
        for part in dotted.split("."):
            if not isinstance(node, Mapping) or part not in node:
                return None
            node = node[part]
        return node

    def use(self, dotted: str) -> None:
        self.used.add(dotted)

    def system_message(self, out: FolderConfig) -> None:
        """The formats' rule: a file name (SkyDiscover), a template name, else the text."""
        key = "prompt.system_message"
        raw = self.get(key)
        value = "system_message" if raw is None else _text(self.file, key, raw)
        if raw is not None:
            self.use(key)
        templates = self._template_dir()
        name = value.strip()
        if self.format == "skydiscover" and raw is not None and "\n" not in name:
            candidate = self.folder / name
            if name and len(name) < _SD_FILE_NAME_CHARS and _is_file(candidate):
                if not _inside(self.folder, candidate):
                    raise self.file.error(
                        key, f"{name!r} is a file outside the task folder; copy it into the folder"
                    )
                out.system_message, out.system_message_source = candidate.read_text(), name
                out.task_keys.append(key)
                return
            if _FILE_NAME.fullmatch(name):
                raise self.file.error(
                    key, f"names the file {name!r}, which is not in {self.folder}; add it"
                )
        is_name = re.fullmatch(r"[\w.-]{1,200}", name) is not None
        if templates is not None and is_name and _is_file(templates / f"{name}.txt"):
            out.system_message = (templates / f"{name}.txt").read_text()
            out.system_message_source = f"prompt.template_dir/{name}.txt"
            out.task_keys.append(out.system_message_source)
            return
        if name in _TEMPLATES[self.format]:
            return  # the format's generic system message: ours stands in for it
        if not name:
            raise self.file.error(key, "is empty; remove it or write the system message")
        out.system_message = value
        out.task_keys.append(key)

    def _template_dir(self) -> Path | None:
        raw = self.get("prompt.template_dir")
        if raw is None:
            return None
        path = self.folder / _text(self.file, "prompt.template_dir", raw)
        if not path.is_dir() or not _inside(self.folder, path):
            return None  # named as not used, like the formats' own warning
        self.use("prompt.template_dir")
        return path

    def template_files(self, out: FolderConfig) -> None:
        templates = self._template_dir()
        if templates is None:
            return
        used = out.system_message_source.removeprefix("prompt.template_dir/")
        out.ignored += [
            f"prompt.template_dir/{p.name}"
            for p in sorted(templates.glob("*.txt"))
            if p.name != used
        ]

    def evaluator(self, out: FolderConfig) -> None:
        defaults = _DEFAULTS[self.format]
        timeout = self.get("evaluator.timeout")
        out.timeout_s = defaults["timeout"]
        if timeout is not None:
            self.use("evaluator.timeout")
            out.task_keys.append("evaluator.timeout")
            out.timeout_s = _number(self.file, "evaluator.timeout", timeout)
        out.timeout_s = self._clamp("evaluator.timeout", out.timeout_s, 0.0, _MAX_TIMEOUT_S)
        cascade = self.get("evaluator.cascade_evaluation")
        if cascade is not None:
            self.use("evaluator.cascade_evaluation")
            out.task_keys.append("evaluator.cascade_evaluation")
            out.cascade = _flag(self.file, "evaluator.cascade_evaluation", cascade)
        key = "evaluator.cascade_thresholds"
        thresholds = self.get(key)
        out.thresholds = defaults["thresholds"]
        if thresholds is not None:
            self.use(key)
            out.task_keys.append(key)
            if not isinstance(thresholds, list) or not thresholds:
                raise self.file.error(key, f"expected a list of numbers, got {thresholds!r}")
            for n, t in enumerate(thresholds):
                if isinstance(t, bool) or not isinstance(t, int | float):
                    raise self.file.error(f"{key}[{n}]", f"expected a number, got {t!r}")
            out.thresholds = tuple(float(t) for t in thresholds)
        if self.format == "openevolve":
            memory = self.get("evaluator.memory_limit_mb")
            if memory is not None:
                self.use("evaluator.memory_limit_mb")
                out.task_keys.append("evaluator.memory_limit_mb")
                memory = int(_number(self.file, "evaluator.memory_limit_mb", memory))
                out.memory_mb = self._clamp("evaluator.memory_limit_mb", memory, 64, 16384)
            cpus = self.get("evaluator.cpu_limit")
            if cpus is not None:
                self.use("evaluator.cpu_limit")
                out.task_keys.append("evaluator.cpu_limit")
                cpus = _number(self.file, "evaluator.cpu_limit", cpus)
                out.cpus = self._clamp("evaluator.cpu_limit", cpus, 0.01, 64.0)

    def _clamp(self, key: str, value: Any, low: Any, high: Any) -> Any:
        """``value`` within the sandbox's range; a value outside it is said, never dropped."""
        kept = min(max(value, low), high)
        if kept != value:
            self.notes.append(f"{key} {value:g} is outside the sandbox's range: {kept:g} applies")
        return kept

    def program(self, out: FolderConfig) -> None:
        for key in ("language", "file_suffix"):
            value = self.get(key)
            if value is not None:
                self.use(key)
                out.task_keys.append(key)
                setattr(out, key, _text(self.file, key, value))
        if out.file_suffix is not None and not re.fullmatch(r"\.\w+", out.file_suffix):
            raise self.file.error("file_suffix", f"expected e.g. '.py', got {out.file_suffix!r}")
        if out.language is None and out.file_suffix is not None:
            out.language = language_of(out.file_suffix)

    def search(self, out: FolderConfig) -> None:
        """Search-level keys with a clear equivalent, as dotted keys of the run config.  Values
        are passed as they are: the run config validates them, naming this file."""
        diff = "diff_based_evolution" if self.format == "openevolve" else "diff_based_generation"
        length = "max_code_length" if self.format == "openevolve" else "max_solution_length"
        simple = {
            "max_iterations": "general.max_iterations",
            "random_seed": "seed",
            diff: "proposer.diff_based",
            length: "proposer.max_solution_length",
            "llm.timeout": "llm.timeout_s",
            "llm.retries": "llm.retries",
        }
        for theirs, ours in simple.items():
            value = self.get(theirs)
            if value is not None:  # null: the format's default (an unset seed …)
                self.use(theirs)
                out.search[ours] = value
                out.origins[ours] = theirs
        api_base = self.get("llm.api_base")
        if isinstance(api_base, str) and api_base and "${" not in api_base:
            self.use("llm.api_base")
            out.search["llm.api_base"] = api_base
            out.origins["llm.api_base"] = "llm.api_base"
        models = self.models("models")
        if models:
            out.search["llm.models"] = models
            named = ("llm.models", "llm.primary_model", "llm.secondary_model")
            out.origins["llm.models"] = "/".join(k for k in named if k in self.used)
        if self.format == "skydiscover":
            guides = self.models("guide_models")
            if guides:
                out.search["llm.guide_models"] = guides
                out.origins["llm.guide_models"] = "llm.guide_models"
            retries = self.get("search.database.max_error_retries")
            enabled = self.get("search.database.enable_error_retry") is not False
            if retries is not None and enabled:
                self.use("search.database.max_error_retries")
                self.use("search.database.enable_error_retry")
                if isinstance(retries, int) and not isinstance(retries, bool):
                    retries += 1  # the reference's attempts per iteration: 1 + retries
                out.search["general.inner_retry_times"] = retries
                out.origins["general.inner_retry_times"] = "search.database.max_error_retries"

    def models(self, section: str) -> list[dict[str, Any]]:
        """``llm.<section>`` (and OpenEvolve's ``primary_model``/``secondary_model``) as
        ``llm.models`` entries; the top-level sampling keys fill what a model leaves unset."""
        entries: list[tuple[str, Any]] = []
        listed = self.get(f"llm.{section}")
        if listed is not None:
            if not isinstance(listed, list):
                raise self.file.error(f"llm.{section}", f"expected a list, got {listed!r}")
            self.use(f"llm.{section}")
            entries += [(f"llm.{section}[{n}]", m) for n, m in enumerate(listed)]
        if section == "models" and self.format == "openevolve":
            entries += self._legacy_models()
        out: list[dict[str, Any]] = []
        for where, entry in entries:
            if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
                raise self.file.error(where, "expected a model with a name, e.g. {name: gpt-4o}")
            item: dict[str, Any] = {"name": entry["name"]}
            if entry.get("weight") is not None:
                item["weight"] = entry["weight"]
            for key in _MODEL_KEYS:
                value = entry.get(key)
                if value is None and self.get(f"llm.{key}") is not None:
                    value = self.get(f"llm.{key}")
                    self.use(f"llm.{key}")
                if value is not None:
                    item[key] = value
            effort = entry.get("reasoning_effort")
            if effort is None and self.get("llm.reasoning_effort") is not None:
                effort = self.get("llm.reasoning_effort")
                self.use("llm.reasoning_effort")
            if effort is not None:
                item["extra_body"] = {"reasoning_effort": effort}
            if where.endswith("]"):
                self.unused_model_keys(where, entry)
            out.append(item)
        return out

    def _legacy_models(self) -> list[tuple[str, Any]]:
        """OpenEvolve's ``primary_model``/``secondary_model`` (weights 1.0 and 0.2 unless set;
        a secondary weight of 0 drops it), appended after ``models`` as OpenEvolve does."""
        out: list[tuple[str, Any]] = []
        for role, default in (("primary", 1.0), ("secondary", 0.2)):
            name = self.get(f"llm.{role}_model")
            if name is None:
                continue
            self.use(f"llm.{role}_model")
            weight = self.get(f"llm.{role}_model_weight")
            if weight is not None:
                self.use(f"llm.{role}_model_weight")
            if role == "primary" and not weight:
                weight = default  # OpenEvolve: ``weight or 1.0``
            if role == "secondary" and weight is None:
                weight = default
            if role == "secondary" and weight == 0:
                continue
            out.append((f"llm.{role}_model", {"name": name, "weight": weight}))
        return out

    def unused_model_keys(self, where: str, entry: Mapping[str, Any]) -> None:
        known = {"name", "weight", "reasoning_effort", *_MODEL_KEYS}
        self.extra += [f"{where}.{k}" for k in entry if k not in known]


def read_folder_config(path: Path) -> FolderConfig:
    """Parse and sort one folder config file (see the module docstring)."""
    file = LocatedYaml(path)
    fmt = _format(file)
    reader = _Reader(file, fmt)
    out = FolderConfig(path=path, format=fmt)
    reader.system_message(out)
    reader.evaluator(out)
    reader.program(out)
    reader.search(out)
    reader.template_files(out)
    out.notes = reader.notes
    leftover = [key for key in _leaves(file.data) if key not in reader.used]
    out.ignored = leftover + out.ignored + reader.extra
    return out
