"""Scaffold discovery and the one function that turns a config into objects.

Each folder under ``scaffolds/`` with a ``config.yaml`` is a scaffold; its package defines
``SPEC`` (a :class:`ScaffoldSpec`): the pydantic model of each component section and a
``build(config, env)`` that returns a :class:`~harness.core.scaffold.Scaffold`.
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, create_model

from harness.core.config import (
    COMPONENT_SECTIONS,
    EmptySection,
    Layer,
    RunConfig,
    deep_merge,
    dotted_get,
    nest,
    override_patch,
    read_yaml,
    validate_config,
)
from harness.core.errors import ConfigError
from harness.core.evaluator import BaseEvaluator
from harness.core.rng import make_rng
from harness.core.scaffold import Scaffold

__all__ = [
    "BuildEnv",
    "ScaffoldSpec",
    "build_scaffold",
    "get_spec",
    "list_scaffolds",
    "load_config",
    "scaffolds_root",
]


@dataclass(frozen=True)
class BuildEnv:
    """What a scaffold's ``build`` gets besides its config."""

    seed: int
    evaluator: BaseEvaluator
    task_description: str = ""
    language: str = "python"
    eval_timeout_s: float | None = None
    #: The run's id, for labelling what the scaffold starts (containers) so it can be reaped.
    run_id: str | None = None

    def rng(self, name: str) -> random.Random:
        """A component's own RNG, derived from the run seed and the component name."""
        return make_rng(self.seed, name)


@dataclass(frozen=True)
class ScaffoldSpec:
    name: str
    build: Callable[[Any, BuildEnv], Scaffold]
    sections: Mapping[str, type[BaseModel]] = field(default_factory=dict)
    folder: Path = Path()

    @property
    def summary(self) -> str:
        """The card's one-line summary (the first quoted line of README.md)."""
        readme = self.folder / "README.md"
        if readme.exists():
            for line in readme.read_text().splitlines():
                if line.startswith(">"):
                    return line.lstrip("> ").strip()
        return ""

    def config_model(self) -> type[RunConfig]:
        unknown = set(self.sections) - set(COMPONENT_SECTIONS)
        if unknown:
            raise ConfigError(f"scaffold {self.name}: unknown sections {sorted(unknown)}")
        fields: dict[str, Any] = {
            sec: (model, model()) for sec, model in self.sections.items() if model is not None
        }
        for sec in COMPONENT_SECTIONS:
            fields.setdefault(sec, (EmptySection, EmptySection()))
        model = create_model(  # type: ignore[call-overload]
            f"{self.name.title().replace('_', '')}Config", __base__=RunConfig, **fields
        )
        return model  # type: ignore[no-any-return]

    def defaults(self) -> dict[str, Any]:
        return read_yaml(self.folder / "config.yaml")


def scaffolds_root() -> Path:
    return Path(__file__).resolve().parents[2] / "scaffolds"


def list_scaffolds() -> list[str]:
    root = scaffolds_root()
    return sorted(p.name for p in root.iterdir() if p.is_dir() and (p / "config.yaml").exists())


def get_spec(name: str) -> ScaffoldSpec:
    valid = list_scaffolds()
    if name not in valid:
        raise ConfigError(f"unknown scaffold {name!r}; valid scaffolds: {', '.join(valid)}")
    module = importlib.import_module(f"scaffolds.{name}")
    spec = getattr(module, "SPEC", None)
    if not isinstance(spec, ScaffoldSpec):
        raise ConfigError(f"scaffolds/{name} does not define SPEC (a ScaffoldSpec)")
    return spec


def load_config(
    scaffold: str | None,
    *,
    config_file: Path | None = None,
    overrides: list[str] | None = None,
    flags: Mapping[str, Any] | None = None,
    flag_names: Mapping[str, str] | None = None,
) -> tuple[ScaffoldSpec, RunConfig]:
    """Defaults ⊕ file ⊕ ``--set`` ⊕ CLI flags, validated strictly for the chosen scaffold.

    ``flag_names`` maps a dotted key of ``flags`` to the flag that set it (``"seed": "--seed"``)
    so that an invalid value is reported against the flag, file or ``--set`` it came from.
    """
    user = read_yaml(config_file) if config_file else {}
    name = scaffold or user.get("scaffold")
    if not name:
        raise ConfigError(
            f"no scaffold given; pass --scaffold NAME (one of: {', '.join(list_scaffolds())})"
        )
    if scaffold and user.get("scaffold") not in (None, scaffold):
        raise ConfigError(
            f"--scaffold {scaffold} conflicts with scaffold: {user['scaffold']} in {config_file}"
        )
    spec = get_spec(str(name))
    flags = dict(flags or {})
    layers: list[Layer] = [(f"scaffolds/{spec.name}/config.yaml", spec.defaults())]
    if config_file:
        layers.append((str(config_file), user))
    layers += [(f"--set {item}", override_patch(item)) for item in overrides or []]
    user_layers = len(layers)
    layers.append(("command-line flags", flags))
    for key, flag in (flag_names or {}).items():
        value = dotted_get(flags, key)
        if value is not None:
            layers.append((flag, nest(key, value)))
    data: dict[str, Any] = {}
    for _, layer in layers:
        data = deep_merge(data, layer)
    data["scaffold"] = spec.name
    config = validate_config(spec.config_model(), data, source=layers)
    if flags:
        # A bad value in the file or a --set is an error even where a flag overrides it.
        below: dict[str, Any] = {}
        for _, layer in layers[:user_layers]:
            below = deep_merge(below, layer)
        below["scaffold"] = spec.name
        validate_config(spec.config_model(), below, source=layers[:user_layers])
    return spec, config


def build_scaffold(spec: ScaffoldSpec, config: RunConfig, env: BuildEnv) -> Scaffold:
    return spec.build(config, env)
