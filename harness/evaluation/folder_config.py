"""A compat task folder's own config (OpenEvolve's ``config.yaml``/``config_phase_N.yaml``,
SkyDiscover's ``config.yaml``), read as OpenEvolve 0.4 and SkyDiscover read it: every key is
applied, or named as not used with the reason, or refused.

- **Task-level keys** apply to the task: the system message (``prompt.system_message``, read as
  the formats read it: the name of a prompt template of the folder's ``prompt.template_dir``
  or of the format, else literal text; SkyDiscover also reads a short single line naming a file
  of the folder), the evaluator timeout (and OpenEvolve's memory and CPU limits), cascade on/off
  and thresholds, the language and file suffix, SkyDiscover's ``inject_evaluator_context``.  The
  format's own defaults apply where the file is silent (timeout: OpenEvolve 300 s, SkyDiscover
  360 s; thresholds: ``[0.5, 0.75, 0.9]``, ``[0.3, 0.6]``), since that is what the folder's
  author ran with.
- **Search-level keys** become a config layer between the scaffold's composition and the user's
  ``--config``/``--set``/flags (:meth:`FolderConfig.defaults_for`): those any scaffold has
  (``max_iterations``, the seed, the models and endpoint, diff vs rewrite …), and those of the
  *method* the folder was written for (OpenEvolve's ``database``/``prompt`` keys, SkyDiscover's
  ``search`` keys of its ``search.type``), which apply when the run uses that method's blocks.
- **Every other key** is named with the reason it does not apply (:mod:`._folder_keys`), and a
  key that would change what the reference does but that Galapagos cannot honour is a one-line
  :class:`TaskError` naming the file, line and why — never dropped silently.

The format is told by its keys (``search``/``diff_based_generation``/``max_solution_length``…:
SkyDiscover; ``diff_based_evolution``/``max_code_length``/``database``…: OpenEvolve).  A file in
neither format, a malformed file or a value of the wrong type is a one-line :class:`TaskError`
naming the file, line and column.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from harness.core.errors import TaskError
from harness.evaluation._folder_keys import (
    METHOD_BLOCKS,
    METHOD_SCAFFOLDS,
    read_openevolve_keys,
    read_skydiscover_keys,
)
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
            "human_feedback_enabled", "human_feedback_file", "human_feedback_mode",
            "max_parallel_iterations", "benchmark"}  # fmt: skip
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
#: OpenEvolve templates the ``openevolve_template`` prompt renders (a folder may replace them).
_OE_RENDERED = frozenset({"diff_user", "full_rewrite_user", "evolution_history",
                          "previous_attempt", "top_program", "inspirations_section",
                          "inspiration_program"})  # fmt: skip
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
#: Reasons for keys no rule names.
_NOT_A_KEY = {
    "openevolve": "not OpenEvolve 0.4 keys (OpenEvolve ignores them too)",
    "skydiscover": "not SkyDiscover keys (SkyDiscover ignores them too)",
}
_AS_HERE = "set to what Galapagos does anyway"


@dataclass
class FolderConfig:
    """What a folder's config file says, sorted into what applies where."""

    path: Path
    format: Format
    #: The method the folder was written for: ``openevolve`` for OpenEvolve's format, the
    #: ``search.type`` of SkyDiscover's (``topk`` when it names none, SkyDiscover's default).
    method: str = "openevolve"
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
    #: SkyDiscover's ``evaluator.inject_evaluator_context``: the evaluator's source goes at the
    #: top of the system message.
    evaluator_context: bool = False
    #: Search defaults any scaffold takes, as dotted keys of the run config.
    search: dict[str, Any] = field(default_factory=dict)
    #: Search defaults of the folder's method (they apply to a run on its blocks).
    method_search: dict[str, Any] = field(default_factory=dict)
    #: The file's key behind each default (``general.max_iterations``: ``max_iterations``).
    origins: dict[str, str] = field(default_factory=dict)
    #: Keys of the file that do not apply here, by reason (dotted, as the file spells them).
    unused: dict[str, list[str]] = field(default_factory=dict)
    #: Task keys the file sets (the rest are the format's defaults), as the file spells them.
    task_keys: list[str] = field(default_factory=list)
    #: What was adjusted on the way in (a timeout above the sandbox's limit …).
    notes: list[str] = field(default_factory=list)

    @property
    def scaffold(self) -> str | None:
        """The Galapagos scaffold of the folder's method (``None``: it has none)."""
        return METHOD_SCAFFOLDS.get(self.method)

    @property
    def ignored(self) -> list[str]:
        """Every key that does not apply, whatever the reason."""
        return [key for keys in self.unused.values() for key in keys]

    def runs_method(self, blocks: Mapping[str, str] | None) -> bool:
        """Whether a composition (slot → block) uses the folder's method's blocks."""
        signature = METHOD_BLOCKS.get(self.method)
        if signature is None or blocks is None:
            return False
        slot, block = signature
        return blocks.get(slot) == block

    def defaults_for(self, blocks: Mapping[str, str] | None) -> dict[str, Any]:
        """The search defaults a run on ``blocks`` takes (dotted keys)."""
        if self.runs_method(blocks):
            return {**self.search, **self.method_search}
        return dict(self.search)

    def unused_for(self, blocks: Mapping[str, str] | None) -> dict[str, list[str]]:
        """:attr:`unused`, plus the method's keys when the run does not use its blocks."""
        out = {reason: list(keys) for reason, keys in self.unused.items()}
        if self.method_search and not self.runs_method(blocks):
            keys = list(dict.fromkeys(self.origins[k] for k in self.method_search))
            out[f"{self.method}'s settings, and this run does not use its blocks"] = keys
        return out

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
        if isinstance(value, Mapping) and value:
            yield from _leaves(value, dotted + ".")
        elif isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
            for n, item in enumerate(value):
                yield from _leaves(item, f"{dotted}[{n}].")
        elif not isinstance(value, Mapping):  # an empty section sets nothing
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

    def __init__(self, file: LocatedYaml, fmt: Format, out: FolderConfig) -> None:
        self.file = file
        self.format = fmt
        self.out = out
        self.folder = file.path.parent
        self.used: set[str] = set()
        self._leaves = list(_leaves(file.data))

    # -- the vocabulary of the key tables (harness.evaluation._folder_keys) -----------------
    def get(self, dotted: str) -> Any:
        node: Any = self.file.data
        for part in dotted.split("."):
            if not isinstance(node, Mapping) or part not in node:
                return None
            node = node[part]
        return node

    def use(self, dotted: str) -> None:
        self.used.add(dotted)

    def _present(self, pattern: str) -> list[str]:
        """The file's leaves a key or pattern (``evolution_trace.*``, ``llm.models[*].x``)
        names; a key whose value is a list or a section counts as one."""
        regex = re.compile(
            re.escape(pattern).replace(r"\[\*\]", r"\[\d+\]").replace(r"\*", ".*") + r"(\..*)?"
        )
        hits = [leaf for leaf in self._leaves if regex.fullmatch(leaf)]
        if not hits and "*" not in pattern and self.get(pattern) is not None:
            hits = [pattern]
        return list(dict.fromkeys(hits))

    def search(self, theirs: str, ours: str) -> None:
        """``theirs`` (when set) is the default of ``ours`` for any scaffold."""
        value = self.get(theirs)
        if value is not None:  # null: the format's default (an unset seed …)
            self.set_search(ours, value, theirs)

    def set_search(self, ours: str, value: Any, origin: str) -> None:
        self.use(origin)
        self.out.search[ours] = value
        self.out.origins[ours] = origin

    def method(self, theirs: str, ours: str) -> None:
        """``theirs`` (when set) is the default of ``ours`` on the folder's method's blocks."""
        value = self.get(theirs)
        if value is not None:
            self.set_method(ours, value, theirs)

    def method_if(self, condition: bool, theirs: str, ours: str) -> None:
        if condition:
            self.method(theirs, ours)

    def set_method(self, ours: str, value: Any, origin: str) -> None:
        self.use(origin)
        self.out.method_search[ours] = value
        self.out.origins[ours] = origin

    def unused(self, patterns: Iterable[str], reason: str) -> None:
        """Name the keys ``patterns`` match (those set and not used otherwise) with ``reason``."""
        for pattern in patterns:
            for key in self._present(pattern):
                if key not in self.used:
                    self.used.add(key)
                    self.out.unused.setdefault(reason, []).append(key)

    def refuse(self, key: str, ok: Callable[[Any], bool], why: str) -> None:
        """A key Galapagos cannot honour unless ``ok(value)``: a one-line error naming it."""
        value = self.get(key)
        if value is None and key not in self._present(key):
            return
        if not ok(value):
            raise self.file.error(key, f"{why} (the value {value!r} cannot be honoured here)")
        self.unused([key], _AS_HERE)

    # -- task-level keys ------------------------------------------------------------------
    def system_message(self) -> None:
        """The formats' rule: a file name (SkyDiscover), a template name, else the text."""
        out = self.out
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

    def template_files(self) -> None:
        """A template directory's files: OpenEvolve's prompt templates and fragments replace
        ours (method defaults); the rest is named."""
        out = self.out
        templates = self._template_dir()
        if templates is None:
            return
        used = out.system_message_source.removeprefix("prompt.template_dir/")
        shown: dict[str, str] = {}
        for path in sorted(templates.glob("*.txt")):
            where = f"prompt.template_dir/{path.name}"
            if path.name == used:
                continue
            if self.format == "openevolve" and path.stem in _OE_RENDERED:
                shown[path.stem] = path.read_text()
                out.origins.setdefault("prompt.templates", where)
                continue
            if self.format == "skydiscover" and path.stem in ("diff_user", "full_rewrite_user"):
                raise TaskError(
                    f"{path}: a SkyDiscover user-prompt template is not supported (Galapagos "
                    "renders its own default prompt; only the system message template is "
                    "read); remove it from the template directory"
                )
            reason = (
                JUDGE_TEMPLATES
                if path.stem in ("evaluation", "evaluator_system_message")
                else "templates the prompt never asks for"
            )
            out.unused.setdefault(reason, []).append(where)
        if shown:
            out.method_search["prompt.templates"] = shown
            out.origins["prompt.templates"] = "prompt.template_dir"
        fragments = templates / "fragments.json"
        if fragments.is_file():
            where = f"prompt.template_dir/{fragments.name}"
            if self.format != "openevolve":
                out.unused.setdefault("templates the prompt never asks for", []).append(where)
                return
            try:
                data = json.loads(fragments.read_text())
            except ValueError as exc:
                raise TaskError(f"{fragments}: not valid JSON ({exc}); fix it") from exc
            if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
                raise TaskError(f"{fragments}: expected an object of texts, like OpenEvolve's")
            out.method_search["prompt.fragments"] = data
            out.origins["prompt.fragments"] = where

    def evaluator(self) -> None:
        out = self.out
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
        else:
            inject = self.get("evaluator.inject_evaluator_context")
            if inject is not None:
                self.use("evaluator.inject_evaluator_context")
                out.evaluator_context = _flag(
                    self.file, "evaluator.inject_evaluator_context", inject
                )
                if out.evaluator_context:
                    out.task_keys.append("evaluator.inject_evaluator_context")

    def _clamp(self, key: str, value: Any, low: Any, high: Any) -> Any:
        """``value`` within the sandbox's range; a value outside it is said, never dropped."""
        kept = min(max(value, low), high)
        if kept != value:
            self.out.notes.append(
                f"{key} {value:g} is outside the sandbox's range: {kept:g} applies"
            )
        return kept

    def program(self) -> None:
        out = self.out
        for key in ("language", "file_suffix"):
            value = self.get(key)
            if value is not None:
                self.use(key)
                out.task_keys.append(key)
                setattr(out, key, _text(self.file, key, value))
        if out.language in ("image", "prompt"):
            raise self.file.error("language", f"{out.language!r} generation is not supported")
        if out.file_suffix is not None and not re.fullmatch(r"\.\w+", out.file_suffix):
            raise self.file.error("file_suffix", f"expected e.g. '.py', got {out.file_suffix!r}")
        if out.language is None and out.file_suffix is not None:
            out.language = language_of(out.file_suffix)

    def endpoint(self) -> None:
        """The models and the endpoint (search defaults for any scaffold)."""
        out = self.out
        api_base = self.get("llm.api_base")
        if isinstance(api_base, str) and api_base and "${" not in api_base:
            self.set_search("llm.api_base", api_base, "llm.api_base")
        self._model_endpoints(api_base)
        models = self.models("models")
        if models:
            named = ("llm.models", "llm.primary_model", "llm.secondary_model")
            self.out.search["llm.models"] = models
            out.origins["llm.models"] = "/".join(k for k in named if k in self.used)
        if self.format == "skydiscover":
            guides = self.models("guide_models")
            if guides:
                out.search["llm.guide_models"] = guides
                out.origins["llm.guide_models"] = "llm.guide_models"

    def _model_endpoints(self, shared: Any) -> None:
        """Per-model ``api_base``s: one endpoint for all (or the section's own) is the run's;
        models at different endpoints cannot be honoured (one endpoint per run)."""
        listed = self.get("llm.models")
        if not isinstance(listed, list):
            return
        bases = {
            n: m["api_base"]
            for n, m in enumerate(listed)
            if isinstance(m, Mapping) and isinstance(m.get("api_base"), str) and m["api_base"]
        }
        distinct = set(bases.values()) | ({shared} if isinstance(shared, str) and shared else set())
        if len(distinct) > 1:
            first = next(iter(bases))
            raise self.file.error(
                f"llm.models[{first}].api_base",
                "models at different endpoints are not supported (a run talks to one "
                "OpenAI-compatible endpoint); give them one api_base",
            )
        for n, base in bases.items():
            self.use(f"llm.models[{n}].api_base")
            if "llm.api_base" not in self.out.search and "${" not in base:
                self.set_search("llm.api_base", base, f"llm.models[{n}].api_base")

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
                known = {"name", "weight", "reasoning_effort", *_MODEL_KEYS}
                self.used.update(f"{where}.{k}" for k in entry if k in known)
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

    def leftovers(self) -> None:
        """Whatever no rule named: the format ignores keys it does not know."""
        for leaf in self._leaves:
            if leaf in self.used or any(leaf.startswith(u + ".") for u in self.used):
                continue
            if re.match(r"llm\.(models|guide_models|evaluator_models)\[\d+\]\.", leaf):
                reason = "model settings with no equivalent here (per-model endpoints, retries)"
            else:
                reason = _NOT_A_KEY[self.format] if not _known(self.format, leaf) else _OTHER
            self.out.unused.setdefault(reason, []).append(leaf)


JUDGE_TEMPLATES = "LLM feedback and judge settings (the file leaves the feedback off)"
_OTHER = "settings with no equivalent here"


def _known(fmt: Format, leaf: str) -> bool:
    """Whether ``leaf`` is in the format's config schema (top-level sections and keys)."""
    head = leaf.split(".")[0].split("[")[0]
    return head in _COMMON | (_OE_ONLY | {_DATABASE} if fmt == "openevolve" else _SD_ONLY)


def _method(file: LocatedYaml, fmt: Format) -> str:
    if fmt == "openevolve":
        return "openevolve"
    search = file.data.get("search")
    kind = search.get("type") if isinstance(search, Mapping) else None
    if kind is None:
        return "topk"  # SkyDiscover's default search
    if not isinstance(kind, str) or not kind:
        raise file.error("search.type", f"expected the name of a search, got {kind!r}")
    return kind


def read_folder_config(path: Path) -> FolderConfig:
    """Parse and sort one folder config file (see the module docstring)."""
    file = LocatedYaml(path)
    fmt = _format(file)
    out = FolderConfig(path=path, format=fmt, method=_method(file, fmt))
    reader = _Reader(file, fmt, out)
    reader.system_message()
    reader.evaluator()
    reader.program()
    reader.endpoint()
    reader.template_files()
    if fmt == "openevolve":
        read_openevolve_keys(reader, file.data.get("max_iterations"))
    else:
        read_skydiscover_keys(reader, out.method)
    reader.leftovers()
    return out
