"""The catalog of named blocks and scaffolds, and the one function that turns config into objects.

- Blocks: ``harness.components.BLOCKS`` (the reusable ones) plus the ``BLOCKS`` of every
  scaffold package that defines some (a scaffold folder holds only what it adds); each is a
  class or function named with :func:`~harness.core.blocks.block`.
- Scaffolds: each folder under ``scaffolds/`` with a ``config.yaml`` is a scaffold; that file is
  its *composition*: ``blocks`` (one named block per slot), optionally ``loop`` (control flow),
  and defaults for any config key.  A user's composition file has the same format (plus an
  optional ``name``) and is accepted wherever a scaffold name is (``--scaffold my.yaml``).

Discovery imports packages by name (``importlib``), so ``core`` depends on no block package, and
only the packages a composition needs (:func:`catalog_for`): ``harness.components`` and the
scaffold's own folder, the other scaffold packages only while a named block is still missing.
:func:`block_catalog` (``galapagos blocks``, the config reference) imports them all.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import create_model

from harness.core.blocks import BlockSpec, BuildEnv, assemble, check, index, lookup
from harness.core.config import (
    COMPONENT_SECTIONS,
    Composition,
    LoopConfig,
    RunConfig,
    dotted_get,
    read_yaml,
)
from harness.core.config_layers import (
    Layer,
    Layers,
    Names,
    file_layer,
    named,
    set_layers,
    setting_layers,
    yaml_lines,
)
from harness.core.errors import ConfigError
from harness.core.scaffold import Scaffold
from harness.core.validation import format_validation_error

__all__ = [
    "BuildEnv",
    "ScaffoldSpec",
    "block_catalog",
    "build_scaffold",
    "catalog_for",
    "chosen_blocks",
    "compose",
    "config_model",
    "get_spec",
    "list_blocks",
    "list_scaffolds",
    "load_config",
    "scaffolds_root",
    "user_layers",
]

#: Keys a composition file may have besides config sections.
_COMPOSITION_KEYS = ("name", "summary")


@dataclass(frozen=True)
class ScaffoldSpec:
    """A scaffold: its name, its composition and defaults, and where it came from."""

    name: str
    #: The composition file (``scaffolds/<name>/config.yaml`` or a user's file).
    path: Path
    #: The file's content without ``name``/``summary``: ``blocks``, ``loop`` and defaults.
    defaults_data: Mapping[str, Any] = field(default_factory=dict)
    summary_text: str = ""

    @property
    def folder(self) -> Path:
        return self.path.parent

    @property
    def composition(self) -> Composition:
        return _composition(self.defaults_data.get("blocks"), str(self.path))

    @property
    def summary(self) -> str:
        """The card's one-line summary (the first quoted line of README.md), else the
        composition's ``summary``."""
        readme = self.folder / "README.md"
        if self.path.name == "config.yaml" and readme.exists():
            for line in readme.read_text().splitlines():
                if line.startswith(">"):
                    return line.lstrip("> ").strip()
        return self.summary_text

    def defaults(self) -> dict[str, Any]:
        return dict(self.defaults_data)

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "summary": self.summary,
            "composition": self.composition.named(),
            "loop": dict(self.defaults_data.get("loop") or {}),
            "path": str(self.path),
        }


def scaffolds_root() -> Path:
    return Path(__file__).resolve().parents[2] / "scaffolds"


def list_scaffolds() -> list[str]:
    root = scaffolds_root()
    return sorted(p.name for p in root.iterdir() if p.is_dir() and (p / "config.yaml").exists())


#: The block modules imported so far, with their ``BLOCKS`` (see :func:`catalog_for`).
_LOADED: dict[str, tuple[Any, ...]] = {}


def _block_modules() -> list[str]:
    """Every module that may define blocks, in catalog order."""
    return ["harness.components", *(f"scaffolds.{name}" for name in list_scaffolds())]


def _load(module_name: str) -> None:
    if module_name not in _LOADED:
        module = importlib.import_module(module_name)
        _LOADED[module_name] = tuple(getattr(module, "BLOCKS", ()))


@functools.cache
def _index(modules: tuple[str, ...]) -> Mapping[str, Mapping[str, BlockSpec]]:
    return index(make for name in modules for make in _LOADED[name])


def _loaded_catalog() -> Mapping[str, Mapping[str, BlockSpec]]:
    return _index(tuple(name for name in _block_modules() if name in _LOADED))


def block_catalog() -> Mapping[str, Mapping[str, BlockSpec]]:
    """Every named block by slot (``harness.components`` and every scaffold package)."""
    for module_name in _block_modules():
        _load(module_name)
    return _loaded_catalog()


def catalog_for(
    named: Mapping[str, str], home: str | None = None
) -> Mapping[str, Mapping[str, BlockSpec]]:
    """A catalog holding the blocks ``named`` (slot → block name), importing only what it
    takes: ``harness.components``, then the scaffold package ``home`` (the composition's own
    folder), then the other scaffold packages one at a time while a name is still missing.  A
    name found nowhere leaves the whole catalog loaded, so its error lists every valid block.
    (Each scaffold package costs its imports: EvoX alone is ≈0.1 s; a run loads its own.)"""
    _load("harness.components")
    if home is not None:
        _load(home)
    catalog = _loaded_catalog()
    missing = lambda: [n for s, n in named.items() if n not in catalog.get(s, {})]  # noqa: E731
    if missing():
        # Packages whose source spells a missing name first (a hint only: what counts is
        # the package's BLOCKS once imported).
        wanted = missing()
        order = sorted(_block_modules(), key=lambda m: not _mentions(m, wanted))
        for module_name in order:
            if not missing():
                break
            _load(module_name)
            catalog = _loaded_catalog()
    return catalog


def _mentions(module_name: str, names: list[str]) -> bool:
    """Whether a scaffold package's source has one of ``names`` as a string literal."""
    if not module_name.startswith("scaffolds."):
        return False
    folder = scaffolds_root() / module_name.split(".", 1)[1]
    quoted = [f'"{n}"' for n in names] + [f"'{n}'" for n in names]
    for path in folder.rglob("*.py"):
        text = path.read_text(encoding="utf-8", errors="replace")
        if any(q in text for q in quoted):
            return True
    return False


def _check(
    composition: Composition, loop: LoopConfig | None = None, home: str | None = None
) -> dict[str, BlockSpec]:
    """:func:`check` against the blocks the composition names; an error is raised against the
    whole catalog, so that its hints (the blocks that would fit) are complete."""
    try:
        return check(composition, catalog_for(composition.named(), home), loop)
    except ConfigError:
        return check(composition, block_catalog(), loop)


def list_blocks() -> list[BlockSpec]:
    return [spec for blocks in block_catalog().values() for spec in blocks.values()]


def _composition(blocks: Any, source: str) -> Composition:
    if not isinstance(blocks, Mapping):
        raise ConfigError(
            f"{source}: a composition needs a 'blocks' mapping naming one block per slot "
            "(population, selection_policy, prompt, proposer, evaluator, memory); "
            "see `galapagos blocks`"
        )
    from pydantic import ValidationError

    try:
        return Composition.model_validate(dict(blocks))
    except ValidationError as exc:
        raise ConfigError(f"{source}: blocks: {format_validation_error(exc, Composition)}") from exc


def _spec_from_file(path: Path, name: str | None = None, *, checked: bool = True) -> ScaffoldSpec:
    data = read_yaml(path)
    file_name = data.pop("name", None)
    summary = str(data.pop("summary", "") or "")
    data.pop("scaffold", None)
    spec = ScaffoldSpec(
        name=name or str(file_name or path.stem),
        path=path,
        defaults_data=data,
        summary_text=summary,
    )
    if checked:
        home = path.parent.name if path.parent.parent == scaffolds_root() else None
        _check(spec.composition, home=f"scaffolds.{home}" if home else None)
    return spec


def get_spec(name: str, *, checked: bool = True) -> ScaffoldSpec:
    """A shipped scaffold by name, or a composition file by path; ``checked=False``: its
    blocks are not looked up (nothing is imported: a listing that only shows their names)."""
    valid = list_scaffolds()
    if name in valid:
        return _spec_from_file(scaffolds_root() / name / "config.yaml", name, checked=checked)
    path = Path(name)
    if path.suffix in (".yaml", ".yml") or path.is_file():
        if not path.is_file():
            raise ConfigError(f"composition file {path} does not exist")
        return _spec_from_file(path, checked=checked)
    raise ConfigError(
        f"unknown scaffold {name!r}; valid scaffolds: {', '.join(valid)} "
        "(or the path of a composition file)"
    )


def config_model(composition: Composition) -> type[RunConfig]:
    """The run config model whose block sections are typed by ``composition``'s blocks."""
    specs = _check(composition)
    fields: dict[str, Any] = {}
    for slot in COMPONENT_SECTIONS:
        section = specs[slot].config
        fields[slot] = (section, section())
    model: type[RunConfig] = create_model(
        "RunConfig_" + "_".join(composition.named().values()), __base__=RunConfig, **fields
    )
    return model


def validate_stored(config: Mapping[str, Any], *, source: str) -> RunConfig:
    """A stored run config, validated against the blocks it names."""
    from pydantic import ValidationError

    composition = _composition(config.get("blocks"), source)
    model = config_model(composition)
    try:
        validated = model.model_validate(dict(config))
    except ValidationError as exc:
        raise ConfigError(f"{source}: {format_validation_error(exc, model)}") from exc
    _check(validated.blocks, validated.loop)
    return validated


def load_config(
    scaffold: str | None,
    *,
    config_file: Path | None = None,
    overrides: list[str] | None = None,
    flags: Mapping[str, Any] | None = None,
    flag_names: Mapping[str, str] | None = None,
    task_layer: Layer | tuple[str, Mapping[str, Any]] | None = None,
    names: Names | None = None,
) -> tuple[ScaffoldSpec, RunConfig]:
    """Composition ⊕ the task's defaults ⊕ file ⊕ overrides ⊕ settings, validated strictly
    for the chosen blocks (the layers of :mod:`harness.core.config_layers`).

    ``task_layer`` is the task's own defaults (:meth:`~harness.evaluation.task.Task.config_layer`);
    a key the chosen blocks do not have is dropped from it (the caller names it as not used).
    ``flags`` are keyword settings as nested keys; ``flag_names`` maps a dotted key of them to
    the caller's name of the setting (``"seed": "--seed"``) so that an invalid value is
    reported against the setting, file or override it came from; ``names`` names the caller's
    other words (``{"set": "--set", "scaffold": "--scaffold"}``).
    """
    flags = dict(flags or {})
    settings = [Layer("flag", "settings", flags)] if flags else []
    settings += setting_layers(
        {key: dotted_get(flags, key) for key in flag_names or {}}, flag_names
    )
    spec, upper = user_layers(
        scaffold,
        user=file_layer("config", config_file) if config_file else None,
        overrides=overrides,
        settings=settings,
        names=names,
    )
    config, _ = compose(spec, upper, task_layer)
    return spec, config


def user_layers(
    scaffold: str | None,
    *,
    user: Layer | None = None,
    overrides: Sequence[str] | None = None,
    settings: Sequence[Layer] = (),
    names: Names | None = None,
) -> tuple[ScaffoldSpec, list[Layer]]:
    """The scaffold a run uses (``scaffold``, else the one ``user`` names) and the user's
    layers above the task's: the user's config, each override, the settings."""
    spec = get_spec(_scaffold_name(scaffold, user, names))
    upper = [] if user is None else [_without_scaffold(user)]
    upper += set_layers(list(overrides or ()), names)
    return spec, [*upper, *settings]


def _scaffold_name(scaffold: str | None, user: Layer | None, names: Names | None) -> str:
    theirs = user.data.get("scaffold") if user is not None else None
    if scaffold and user is not None and theirs not in (None, scaffold):
        raise ConfigError(
            f"{named(names, 'scaffold')} {scaffold} conflicts with scaffold: {theirs} in "
            f"{user.where('scaffold')}"
        )
    name = scaffold or theirs
    if not name:
        raise ConfigError(
            f"no scaffold given; name one with {named(names, 'scaffold')} (one of: "
            f"{', '.join(list_scaffolds())}, or the path of a composition file)"
        )
    return str(name)


def _without_scaffold(layer: Layer) -> Layer:
    data = {k: v for k, v in layer.data.items() if k != "scaffold"}
    return Layer(layer.kind, layer.name, data, layer.lines)


def compose(
    spec: ScaffoldSpec,
    upper: Sequence[Layer],
    task_layer: Layer | tuple[str, Mapping[str, Any]] | None = None,
) -> tuple[RunConfig, Layers]:
    """The run config of ``spec`` under the user's layers ``upper`` (and the task's), and the
    layers it was built from.  A block swapped by the user (``blocks.proposer:
    full_rewrite``) takes its defaults from its own config model, not from the composition's
    section for the block it replaces.  A bad value of a file or an override is an error even
    where a setting overrides it."""
    composition = _composition(_chosen_blocks(spec, upper), "blocks")
    model = config_model(composition)
    layers = [_scaffold_layer(spec, composition)]
    task = _task_layer(task_layer, model)
    if task is not None:
        layers.append(task)
    stack = Layers([*layers, *upper])
    config = stack.validate(model, scaffold=spec.name)
    if stack.of("flag"):
        stack.of("scaffold", "task", "config", "set").validate(model, scaffold=spec.name)
    _check(config.blocks, config.loop)  # the loop options the blocks refuse
    return config, stack


def chosen_blocks(spec: ScaffoldSpec, upper: Sequence[Layer]) -> dict[str, str]:
    """The composition a run on ``spec`` uses under the user's layers (slot → block)."""
    return _composition(_chosen_blocks(spec, upper), "blocks").named()


def _chosen_blocks(spec: ScaffoldSpec, upper: Sequence[Layer]) -> dict[str, Any]:
    blocks = dict(spec.defaults_data.get("blocks") or {})
    for layer in upper:
        chosen = layer.data.get("blocks")
        if isinstance(chosen, Mapping):
            blocks.update(chosen)
    return blocks


def _scaffold_layer(spec: ScaffoldSpec, composition: Composition) -> Layer:
    """The composition's defaults, without the sections of the blocks the user swapped."""
    own = dict(spec.defaults_data.get("blocks") or {})
    chosen = composition.named()
    swapped = {slot for slot in COMPONENT_SECTIONS if chosen[slot] != own.get(slot)}
    data = {k: v for k, v in spec.defaults_data.items() if k not in swapped}
    lines = yaml_lines(spec.path.read_text()) if spec.path.is_file() else {}
    return Layer("scaffold", str(spec.path), data, lines)


def _task_layer(
    task: Layer | tuple[str, Mapping[str, Any]] | None, model: type[RunConfig]
) -> Layer | None:
    """The task's layer with only the keys ``model`` has."""
    if task is None:
        return None
    if not isinstance(task, Layer):
        task = Layer("task", task[0], task[1])
    return Layer("task", task.name, _known_keys(model, task.data), task.lines)


def _known_keys(model: type[Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """``patch`` without the keys ``model`` does not have (nested mappings walked)."""
    out: dict[str, Any] = {}
    for key, value in patch.items():
        field_info = getattr(model, "model_fields", {}).get(key)
        if field_info is None:
            continue
        sub = field_info.annotation
        if isinstance(value, Mapping) and hasattr(sub, "model_fields"):
            inner = _known_keys(sub, value)
            if inner:
                out[key] = inner
        else:
            out[key] = value
    return out


def build_scaffold(spec: ScaffoldSpec, config: RunConfig, env: BuildEnv) -> Scaffold:
    """The scaffold of ``config.blocks`` (the spec names it)."""
    return assemble(spec.name, config, env, catalog_for(config.blocks.named()))


def describe_block(slot: str, name: str) -> BlockSpec:
    return lookup(catalog_for({slot: name}), slot, name)
