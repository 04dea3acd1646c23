"""Named blocks and how a composition of six of them becomes a :class:`Scaffold`.

Every implementation of a slot is registered under a stable name with a :class:`BlockSpec`: its
config model (the slot's section of the run config), a one-line summary, what it *provides* and
what it *requires* of the other slots.  A composition names one block per slot; :func:`check`
refuses an incompatible one before anything is built, with one line naming both blocks, and
:func:`assemble` builds the blocks in a fixed order so a block can receive the ones it depends
on: evaluator → population → memory → selection policy → proposer → prompt builder.

Capabilities are plain words (``islands``, ``map_elites``, ``strategy_history``); a block that
needs a particular implementation requires the word that implementation provides.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel

from harness.core.config import SLOTS, Composition, EmptySection, RunConfig
from harness.core.errors import ConfigError
from harness.core.evaluator import BaseEvaluator
from harness.core.records import TaskInfo
from harness.core.rng import make_rng
from harness.core.scaffold import Scaffold

__all__ = ["BUILD_ORDER", "BlockSpec", "BuildContext", "BuildEnv", "assemble", "check"]

#: Blocks are built in this order; a block's ``build`` sees the ones built before it.
BUILD_ORDER = ("evaluator", "population", "memory", "selection_policy", "proposer", "prompt")

T = TypeVar("T")


@dataclass(frozen=True)
class BuildEnv:
    """What the run gives every block besides its config: the seed, the sandboxed evaluator,
    what may be shown of the task, and the run id (to label containers for reaping)."""

    seed: int
    evaluator: BaseEvaluator
    task: TaskInfo = field(default_factory=TaskInfo)
    run_id: str | None = None
    #: The run's sandbox sessions (a ``harness.sandbox.sessions.SessionBackend``, served by the
    #: run's Runtime): where a block runs long-lived servers, e.g. EvoX strategies.
    sessions: Any = None
    #: Seams a block may take instead of making its own (e.g. ``strategy_factory`` for EvoX's
    #: strategy sandboxes); tests inject doubles here.
    extras: Mapping[str, Any] = field(default_factory=dict)

    def rng(self, name: str) -> random.Random:
        """A block's own RNG, derived from the run seed and the block's name."""
        return make_rng(self.seed, name)


@dataclass(frozen=True)
class BuildContext:
    """Passed to a block's ``build``: the run's env, the whole (read-only) config, and the
    blocks built so far by slot."""

    env: BuildEnv
    config: RunConfig
    built: Mapping[str, Any]

    def rng(self, name: str) -> random.Random:
        return self.env.rng(name)

    def built_as(self, slot: str, cls: type[T]) -> T:
        """The block built for ``slot``, which must be a ``cls``; else a :class:`ConfigError`
        naming the slot and the composition's blocks (the requirement check normally refuses
        such a composition first)."""
        block = self.built.get(slot)
        if isinstance(block, cls):
            return block
        named = self.config.blocks.named()
        have = type(block).__name__ if slot in self.built else "nothing built yet"
        raise ConfigError(
            f"this composition needs a {cls.__name__} in the {slot} slot, got {have} "
            f"(blocks: {', '.join(f'{s}={n}' for s, n in named.items())})"
        )


@dataclass(frozen=True)
class BlockSpec:
    """One named implementation of a slot."""

    slot: str
    name: str
    summary: str
    #: ``build(section, ctx)``: ``section`` is the validated config section of this block.
    build: Callable[[Any, BuildContext], Any]
    config: type[BaseModel] = EmptySection
    provides: frozenset[str] = frozenset()
    #: Capabilities needed from other slots: ``{"population": frozenset({"islands"})}``.
    requires: Mapping[str, frozenset[str]] = field(default_factory=dict)
    #: Where it is defined (module), for ``galapagos blocks``.
    source: str = ""

    def __post_init__(self) -> None:
        if self.slot not in SLOTS:
            raise ValueError(f"block {self.name!r}: unknown slot {self.slot!r}")
        bad = set(self.requires) - set(SLOTS)
        if bad:
            raise ValueError(f"block {self.name!r} requires unknown slots {sorted(bad)}")

    def describe(self) -> dict[str, Any]:
        return {
            "slot": self.slot,
            "name": self.name,
            "summary": self.summary,
            "provides": sorted(self.provides),
            "requires": {slot: sorted(caps) for slot, caps in self.requires.items()},
            "config": _config_fields(self.config),
            "source": self.source,
        }


def _config_fields(model: type[BaseModel]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        default = None if info.is_required() else info.get_default(call_default_factory=True)
        if isinstance(default, BaseModel):
            default = default.model_dump(mode="json")
        out[name] = {
            "type": _type_name(info.annotation),
            "default": default,
            "required": info.is_required(),
            "help": info.description or "",
        }
    return out


def _type_name(annotation: Any) -> str:
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation).replace("typing.", "")


Catalog = Mapping[str, Mapping[str, BlockSpec]]


def lookup(catalog: Catalog, slot: str, name: str) -> BlockSpec:
    """The block named ``name`` in ``slot``; an unknown name lists the valid ones."""
    blocks = catalog.get(slot, {})
    spec = blocks.get(name)
    if spec is None:
        valid = ", ".join(sorted(blocks)) or "(none)"
        raise ConfigError(f"unknown {slot} block {name!r}; valid {slot} blocks: {valid}")
    return spec


def check(composition: Composition, catalog: Catalog) -> dict[str, BlockSpec]:
    """The specs of a composition, or a one-line :class:`ConfigError` naming both blocks of the
    first unmet requirement."""
    specs = {slot: lookup(catalog, slot, name) for slot, name in composition.named().items()}
    for slot in SLOTS:
        spec = specs[slot]
        for other, needed in spec.requires.items():
            have = specs[other].provides
            missing = sorted(set(needed) - set(have))
            if missing:
                providers = sorted(
                    name
                    for name, candidate in catalog.get(other, {}).items()
                    if set(needed) <= set(candidate.provides)
                )
                hint = f"; use one of: {', '.join(providers)}" if providers else ""
                raise ConfigError(
                    f"incompatible blocks: {slot} {spec.name!r} needs a {other} block providing "
                    f"{', '.join(repr(m) for m in missing)}, which {other} "
                    f"{specs[other].name!r} does not provide{hint}"
                )
    return specs


def assemble(name: str, config: RunConfig, env: BuildEnv, catalog: Catalog) -> Scaffold:
    """Build the six blocks of ``config.blocks`` (checked) into a scaffold."""
    specs = check(config.blocks, catalog)
    built: dict[str, Any] = {}
    for slot in BUILD_ORDER:
        spec = specs[slot]
        section = getattr(config, slot) if slot != "evaluator" else config.evaluator
        ctx = BuildContext(env=env, config=config, built=dict(built))
        built[slot] = spec.build(section, ctx)
    return Scaffold(
        name=name,
        population=built["population"],
        selection=built["selection_policy"],
        prompt_builder=built["prompt"],
        proposer=built["proposer"],
        evaluator=built["evaluator"],
        memory=built["memory"],
        task=env.task,
        loop=config.loop,
        block_names=config.blocks.named(),
    )


def index(specs: Iterable[BlockSpec]) -> dict[str, dict[str, BlockSpec]]:
    """Specs by slot and name; a duplicate name within a slot is an error."""
    out: dict[str, dict[str, BlockSpec]] = {slot: {} for slot in SLOTS}
    for spec in specs:
        seen = out[spec.slot].get(spec.name)
        if seen is not None and seen is not spec:
            raise ConfigError(
                f"two {spec.slot} blocks are named {spec.name!r} ({seen.source}, {spec.source})"
            )
        out[spec.slot][spec.name] = spec
    return out
