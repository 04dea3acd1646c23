"""Task folders: the card (``task.yaml``), the trusted evaluator, the seed program.

A *native* task folder has a ``task.yaml`` validated by :class:`TaskCard`; its evaluator runs in
*sealed* mode (the scorer gets a candidate handle and recomputes everything).  A folder with an
``evaluator.py`` and no card is an OpenEvolve/SkyDiscover folder and loads unchanged in *compat*
mode, with a card synthesised from what the folder holds.
"""

from __future__ import annotations

import ast
import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from harness._shipped import shipped_dir
from harness.core.config import deep_merge, nest
from harness.core.config_layers import Layer, yaml_lines
from harness.core.errors import TaskError
from harness.core.validation import format_validation_error
from harness.evaluation._container import BRIDGE_MODULE, ContainerFolder, container_folder
from harness.evaluation.folder_config import (
    OPENEVOLVE_THRESHOLDS,
    FolderConfig,
    find_folder_config,
    language_of,
    read_folder_config,
)
from harness.evaluation.preflight import TOOLCHAIN_IMAGES
from harness.sandbox.protocol import Limits

__all__ = [
    "BestKnown",
    "CascadeStage",
    "ModelContext",
    "Task",
    "TaskCard",
    "TaskLimits",
    "list_tasks",
    "load_task",
    "task_roots",
    "tasks_root",
]

#: Files shipped to the sandbox are capped so a task folder cannot balloon every job.
MAX_TASK_BYTES = 16 << 20


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BestKnown(_Strict):
    value: float
    source: str
    #: Where the value sits on the ``combined_score`` scale (computed by the card author).
    combined_score: float | None = None


class CascadeStage(_Strict):
    #: Evaluator function for this stage (``evaluate_stage1`` …).
    function: str
    #: The next stage runs only if this stage's score (``combined_score``, else the mean of the
    #: numeric metrics) is at least this; ``None`` on the last stage.
    threshold: float | None = None


class TaskLimits(_Strict):
    wall_s: float = Field(60.0, gt=0, le=3600)
    memory_mb: int = Field(1024, ge=64, le=16384)
    cpus: float = Field(1.0, gt=0, le=64)
    pids: int = Field(128, ge=8, le=4096)
    output_mb: float = Field(1.0, gt=0, le=64)
    tmpfs_mb: int = Field(64, ge=8, le=4096)

    def to_limits(self) -> Limits:
        return Limits(
            wall_s=self.wall_s,
            memory_mb=self.memory_mb,
            cpus=self.cpus,
            pids=self.pids,
            output_bytes=int(self.output_mb * (1 << 20)),
            tmpfs_mb=self.tmpfs_mb,
        )


class ModelContext(_Strict):
    """What a model (a guide or meta LLM) may be shown of the task besides its description.

    The reference sends the whole evaluator source to its guide model; a task's evaluator can
    hold reference solutions or data that must not reach a model, so by default only its
    *public parts* are shown (the module docstring, the function signatures and docstrings, and
    any region between ``# MODEL-VISIBLE-START`` and ``# MODEL-VISIBLE-END`` lines).
    """

    #: ``none``: nothing of the evaluator; ``public`` (default): its public parts; ``full``:
    #: its whole source (choose it only for an evaluator that holds nothing secret).
    evaluator: Literal["none", "public", "full"] = "public"
    #: Files of the folder that hold hidden data (reference solutions, test instances): never
    #: shown to a model; ``galapagos task check`` fails a task whose model-visible text
    #: contains any of their content.
    hidden: tuple[str, ...] = ()


class TaskCard(_Strict):
    """``task.yaml``: what the task is, how it is scored, what the candidate must provide."""

    name: str
    description: str
    mode: Literal["sealed", "compat"] = "sealed"
    objective: str
    direction: Literal["maximize", "minimize"] = "maximize"
    #: Metric holding the raw objective value (e.g. ``sum_radii``).
    metric: str | None = None
    best_known: BestKnown | None = None
    #: How ``combined_score`` (higher is better) is derived from the raw value.
    score: str = "combined_score"
    #: Function the candidate program must define (sealed mode).
    entry_point: str | None = None
    image: str = "python-eval"
    preload: tuple[str, ...] = ()
    limits: TaskLimits = TaskLimits()
    evaluator: str = "evaluator.py"
    initial_program: str = "initial_program.py"
    #: The search starts from scratch (no seed program): the initial program file may be
    #: absent.  Otherwise a missing initial program is an error, never a silent start from
    #: scratch.
    from_scratch: bool = False
    #: Extra trusted files (relative to the folder) shipped next to the evaluator.
    files: tuple[str, ...] = ()
    cascade: tuple[CascadeStage, ...] = ()
    language: str = "python"
    #: Free-form validity rules and tolerances, shown in docs and prompts.
    validity: str = ""
    #: What a guide/meta model may see of the task (see :class:`ModelContext`).
    model_context: ModelContext = ModelContext()
    #: The system message of every solution prompt, in place of the generic one (domain
    #: knowledge: what is known, what works).  A run takes it as its ``prompt.system_message``
    #: default: the user's ``--config``/``--set`` override it.
    system_message: str | None = None
    #: File suffix of candidate programs (compat folders may set it; default from language).
    file_suffix: str | None = None
    #: A compat folder's requirements.txt: packages its image must carry (the image is then a
    #: pip layer over ``python-eval`` with those it lacks, built on first use).
    requirements: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _check(self) -> TaskCard:
        if self.mode == "sealed" and not self.entry_point:
            raise ValueError("a sealed task needs 'entry_point' (the function candidates define)")
        for stage in self.cascade[:-1]:
            if stage.threshold is None:
                raise ValueError(f"cascade stage {stage.function!r} needs a 'threshold'")
        return self

    @property
    def stages(self) -> tuple[CascadeStage, ...]:
        return self.cascade or (CascadeStage(function="evaluate"),)


@dataclass(frozen=True)
class Task:
    """A loaded task: its card, folder, and the bytes shipped to the sandbox."""

    card: TaskCard
    path: Path
    #: Trusted files for the sandbox: relative path → bytes (evaluator first).
    files: Mapping[str, bytes]
    initial_program: str | None
    #: A compat folder's own config (its task-level keys are already in the card).
    folder_config: FolderConfig | None = None

    @property
    def system_message(self) -> str | None:
        return self.card.system_message

    def config_layer(self, blocks: Mapping[str, str] | None = None) -> Layer | None:
        """The task's own defaults for the run config (a ``task`` layer), named by the file
        they come from, with the line of each key: its system message (as
        ``prompt.system_message``) and a compat folder's search-level keys (those of the
        folder's method only for a run on that method's ``blocks``, slot → block).  A run
        places them between the scaffold's composition and the user's file, overrides and
        settings, so the user overrides them as usual."""
        patch: dict[str, Any] = {}
        if self.system_message:
            patch["prompt"] = {"system_message": self.system_message}
        folder = self.folder_config
        source = folder.path if folder is not None else self.path / "task.yaml"
        if not patch and (folder is None or not folder.defaults_for(blocks)):
            return None
        theirs = {"prompt.system_message": "system_message"}
        if folder is not None:
            theirs = {"prompt.system_message": "prompt.system_message", **folder.origins}
            for key, value in folder.defaults_for(blocks).items():
                patch = deep_merge(patch, nest(key, value))
        file_lines = yaml_lines(source.read_text()) if source.is_file() else {}
        lines = {
            ours: file_lines[their.split("[")[0]]
            for ours, their in theirs.items()
            if their.split("[")[0] in file_lines
        }
        return Layer("task", str(source), patch, lines)

    @property
    def name(self) -> str:
        return self.card.name

    def digest(self) -> str:
        """Content hash of the card, the trusted files and the seed (to detect changed tasks)."""
        h = hashlib.sha256(self.card.model_dump_json().encode())
        for name in sorted(self.files):
            h.update(name.encode() + b"\0" + self.files[name])
        h.update((self.initial_program or "").encode())
        return h.hexdigest()[:16]

    @property
    def evaluator_module(self) -> str:
        return Path(self.card.evaluator).stem

    def prompt_description(self) -> str:
        c = self.card
        lines = [c.description.strip()]
        if c.objective:
            lines.append(f"Objective: {c.objective.strip()}")
        if c.entry_point:
            lines.append(f"The program must define `{c.entry_point}`.")
        if c.validity:
            lines.append(f"Validity: {c.validity.strip()}")
        return "\n".join(lines)


def tasks_root() -> Path:
    """Folder of the shipped tasks."""
    return shipped_dir("tasks")


def task_roots() -> list[Path]:
    """Where task names are looked up: the shipped tasks, then the folders ``GALAPAGOS_TASKS``
    names (separated by ``os.pathsep``), which add tasks; a name in two roots is the first's."""
    extra = [Path(p).expanduser() for p in os.environ.get("GALAPAGOS_TASKS", "").split(os.pathsep)]
    return list(dict.fromkeys([tasks_root(), *(p for p in extra if str(p) not in ("", "."))]))


def list_tasks(root: Path | None = None) -> list[str]:
    """Task names in ``root``, or (default) in every root of :func:`task_roots`."""
    roots = [root] if root is not None else task_roots()
    names: set[str] = set()
    for folder in roots:
        if folder.is_dir():
            names.update(
                p.name
                for p in folder.iterdir()
                if p.is_dir() and ((p / "task.yaml").exists() or (p / "evaluator.py").exists())
            )
    return sorted(names)


def _resolve(name_or_path: str | os.PathLike[str]) -> Path:
    candidate = Path(name_or_path)
    if candidate.is_dir():
        return candidate.resolve()
    if os.sep not in str(name_or_path):
        for root in task_roots():
            named = root / str(name_or_path)
            if named.is_dir():
                return named.resolve()
    valid = ", ".join(list_tasks()) or "(none)"
    raise TaskError(
        f"unknown task {str(name_or_path)!r}: not a folder and not one of: {valid}. "
        "Pass a task name or the path of a task folder."
    )


def _read_card(folder: Path) -> TaskCard:
    card_path = folder / "task.yaml"
    try:
        raw = yaml.safe_load(card_path.read_text())
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise TaskError(
            f"malformed YAML in {card_path}{where}: {problem}. Fix the file and retry."
        ) from exc
    if not isinstance(raw, dict):
        raise TaskError(f"{card_path}: expected a mapping of card fields")
    try:
        return TaskCard.model_validate(raw)
    except ValidationError as exc:
        raise TaskError(f"{card_path}: {format_validation_error(exc, TaskCard)}") from exc


def _compat_card(folder: Path, config: FolderConfig | None) -> TaskCard:
    """Synthesise a card for an OpenEvolve/SkyDiscover folder from its evaluator's functions
    and its own config file's task-level keys (see :mod:`harness.evaluation.folder_config`)."""
    funcs = _evaluator_functions(folder / "evaluator.py")
    limits = _compat_limits(config)
    cascade = _compat_cascade(funcs, config)
    suffix = (config.file_suffix if config else None) or ".py"
    seeds = [f"initial_program{suffix}", "initial_program.py", "initial_program.rs"]
    initial = next((name for name in seeds if (folder / name).exists()), seeds[0])
    language = (config.language if config else None) or language_of(Path(initial).suffix)
    requirements = _requirements(folder)
    if config is None or config.format == "openevolve":
        requirements += _openevolve_environment(folder, initial, requirements)
    # Another language's programs run in its toolchain image (built on demand).
    image = _with_requirements(
        TOOLCHAIN_IMAGES.get(language or "python", "python-eval"), requirements
    )
    return TaskCard(
        name=folder.name,
        description=f"OpenEvolve/SkyDiscover task folder {folder.name} (compat mode).",
        mode="compat",
        objective="maximise combined_score as computed by the folder's evaluator.py",
        limits=TaskLimits(**limits),
        cascade=cascade,
        initial_program=initial,
        preload=("numpy",),
        language=language or "python",
        system_message=_compat_system_message(folder, config),
        file_suffix=config.file_suffix if config else None,
        image=image,
        requirements=requirements,
    )


def _evaluator_functions(evaluator: Path) -> set[str]:
    """The top-level functions of a folder's ``evaluator.py``; it must define ``evaluate`` or
    ``evaluate_stage1``."""
    try:
        tree = ast.parse(evaluator.read_text())
    except SyntaxError as exc:
        raise TaskError(f"{evaluator}: does not parse ({exc})") from exc
    funcs = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    if "evaluate" not in funcs and "evaluate_stage1" not in funcs:
        raise TaskError(f"{evaluator}: defines neither evaluate() nor evaluate_stage1()")
    return funcs


def _compat_limits(config: FolderConfig | None) -> dict[str, Any]:
    """The limits a folder's config file sets (its evaluator timeout, memory, CPUs)."""
    limits: dict[str, Any] = {}
    if config is not None:
        limits["wall_s"] = config.timeout_s
        if config.memory_mb is not None:
            limits["memory_mb"] = config.memory_mb
        if config.cpus is not None:
            limits["cpus"] = config.cpus
    return limits


def _with_requirements(image: str, requirements: tuple[str, ...]) -> str:
    """``image`` plus the requirements it does not have already (a derived image's name)."""
    if not requirements:
        return image
    from harness.sandbox.images import derived_name, image_packages, requirement_name

    present = image_packages(image)
    return derived_name(image, [r for r in requirements if requirement_name(r) not in present])


def _container_card(
    folder: Path, config: FolderConfig | None, container: ContainerFolder
) -> TaskCard:
    """A card for SkyDiscover's containerised format (:mod:`harness.evaluation._container`): one
    stage (SkyDiscover's container evaluator has no cascade), run by the bridge module in the
    image built from the folder's Dockerfile."""
    limits = {"wall_s": config.timeout_s} if config is not None else {"wall_s": 360.0}
    suffix = (config.file_suffix if config else None) or ".py"
    initial = f"initial_program{suffix}"
    requirements = container.image.requirements
    base = _with_requirements("python-eval", requirements)
    return TaskCard(
        name=folder.name,
        description=f"SkyDiscover task folder {folder.name} (containerised evaluator, compat).",
        mode="compat",
        objective="maximise combined_score as computed by the folder's evaluator/evaluate.sh",
        limits=TaskLimits(**limits),
        evaluator=f"{BRIDGE_MODULE}.py",
        initial_program=initial,
        language=(config.language if config else None) or language_of(suffix) or "python",
        system_message=_compat_system_message(folder, config, container),
        file_suffix=config.file_suffix if config else None,
        image=container.image_name(base),
        requirements=requirements,
    )


def _compat_system_message(
    folder: Path, config: FolderConfig | None, container: ContainerFolder | None = None
) -> str | None:
    """The folder's system message; SkyDiscover's ``inject_evaluator_context`` puts the
    evaluator's source (as SkyDiscover reads it) above it."""
    message = config.system_message if config else None
    if config is None or not config.evaluator_context:
        return message
    if container is not None:
        source = container.context()
    else:
        source = (folder / "evaluator.py").read_text()
    context = f"# Task Description\n\n{source}"
    return f"{context}\n\n{message}" if message else context


def _compat_cascade(funcs: set[str], config: FolderConfig | None) -> tuple[CascadeStage, ...]:
    """The stages the reference runs: ``evaluate_stage1`` … while each passes its threshold,
    at most one stage more than there are thresholds (OpenEvolve: up to three; SkyDiscover runs
    two); none when the folder turns the cascade off and has ``evaluate()``."""
    if config is not None and not config.cascade and "evaluate" in funcs:
        return ()
    thresholds = config.thresholds if config is not None else OPENEVOLVE_THRESHOLDS
    most = 2 if config is not None and config.format == "skydiscover" else 3
    names: list[str] = []
    while (
        len(names) < min(most, len(thresholds) + 1) and f"evaluate_stage{len(names) + 1}" in funcs
    ):
        names.append(f"evaluate_stage{len(names) + 1}")
    return tuple(
        CascadeStage(function=name, threshold=thresholds[i] if i < len(names) - 1 else None)
        for i, name in enumerate(names)
    )


#: OpenEvolve's own dependencies (import name → package), present wherever OpenEvolve runs, so
#: its example folders import them without listing them (``tqdm`` in its math problems).
_OPENEVOLVE_DEPENDENCIES = {"tqdm": "tqdm", "yaml": "pyyaml", "dacite": "dacite"}


def _openevolve_environment(folder: Path, initial: str, listed: tuple[str, ...]) -> tuple[str, ...]:
    """The OpenEvolve dependencies an OpenEvolve folder imports and does not list."""
    from harness.evaluation.preflight import needs_of
    from harness.sandbox.images import requirement_name

    seed = folder / initial
    needs = needs_of(folder, folder / "evaluator.py", seed if seed.is_file() else None, "python")
    names = {requirement_name(r) for r in listed}
    return tuple(
        package
        for module, package in _OPENEVOLVE_DEPENDENCIES.items()
        if module in needs.modules and package not in names
    )


def _requirements(folder: Path) -> tuple[str, ...]:
    """The pip requirements a compat folder lists (``requirements.txt``): names and version
    specifiers only (options, includes and URLs are not installable into an offline image)."""
    path = folder / "requirements.txt"
    if not path.is_file():
        return ()
    out = []
    for raw in path.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith("-") or "://" in line or line.startswith("."):
            continue
        out.append(line)
    return tuple(out)


def _collect_files(folder: Path, card: TaskCard) -> dict[str, bytes]:
    names = [card.evaluator, *card.files]
    if card.mode == "compat":
        # Compat evaluators import helpers from their own folder; ship the Python files there.
        names += [
            p.name
            for p in sorted(folder.glob("*.py"))
            if p.name not in {card.evaluator, card.initial_program}
        ]
    files: dict[str, bytes] = {}
    total = 0
    for rel in dict.fromkeys(names):
        path = (folder / rel).resolve()
        if folder.resolve() not in path.parents:
            raise TaskError(f"{folder}: file {rel!r} is outside the task folder")
        if not path.is_file():
            raise TaskError(f"{folder}: the card names {rel!r}, which does not exist")
        data = path.read_bytes()
        total += len(data)
        if total > MAX_TASK_BYTES:
            raise TaskError(f"{folder}: task files exceed {MAX_TASK_BYTES >> 20} MiB")
        files[rel] = data
    return files


def load_task(name_or_path: str | os.PathLike[str], *, config_file: str | None = None) -> Task:
    """Load a shipped task by name, or any task folder (native or compat) by path.

    ``config_file`` chooses a compat folder's config file (default: its ``config.yaml`` when
    present), e.g. OpenEvolve's ``config_phase_1.yaml``."""
    folder = _resolve(name_or_path)
    folder_config: FolderConfig | None = None
    container: ContainerFolder | None = None
    if (folder / "task.yaml").exists():
        if config_file is not None:
            raise TaskError(
                f"{folder} is a native task (task.yaml); --task-config applies to "
                "OpenEvolve/SkyDiscover folders only"
            )
        card = _read_card(folder)
    elif (folder / "evaluator.py").exists():
        found = find_folder_config(folder, config_file)
        folder_config = read_folder_config(found) if found is not None else None
        card = _compat_card(folder, folder_config)
    elif (container := container_folder(folder)) is not None:
        found = find_folder_config(folder, config_file)
        folder_config = read_folder_config(found) if found is not None else None
        card = _container_card(folder, folder_config, container)
    else:
        raise TaskError(
            f"{folder}: not a task folder (needs task.yaml, or evaluator.py for an "
            "OpenEvolve/SkyDiscover folder, or SkyDiscover's evaluator/ with a Dockerfile and "
            "evaluate.sh)"
        )
    if container is not None:
        files = {card.evaluator: container.bridge(), **container.files()}
    else:
        files = _collect_files(folder, card)
    initial_path = folder / card.initial_program
    if initial_path.is_file():
        initial: str | None = initial_path.read_text()
    elif card.from_scratch:
        initial = None
    else:
        raise TaskError(
            f"{folder}: the initial program {card.initial_program} does not exist; add it, or "
            "set from_scratch: true in task.yaml to search without a seed program"
        )
    return Task(
        card=card, path=folder, files=files, initial_program=initial, folder_config=folder_config
    )
