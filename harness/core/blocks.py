"""Named blocks, what each one needs, and how a composition of six becomes a :class:`Scaffold`.

A block is a class derived from one slot's base (:class:`~harness.core.population.BasePopulation`,
…) or a function that returns one, named with :func:`block`.  Its slot follows from the type it
builds; what it needs are its parameters, each one of:

- ``config`` — its section of the run config, typed by the section's model (no ``config``
  parameter: the section takes no options);
- a slot's name (``population``, ``selection_policy``, ``prompt``, ``proposer``, ``evaluator``,
  ``memory``) — that slot's block, which must be an instance of the annotation (a class, or a
  ``Protocol`` whose public members it has).  ``X | None`` makes it optional: the block gets
  ``None`` when the composition's block is not an ``X``;
- a run resource (:data:`RESOURCES`): ``rng`` (its own seeded RNG), ``seed``, ``task``,
  ``loop``, ``general``, ``sessions``, ``run_id``, ``task_evaluator``.

:func:`check` refuses a composition before anything is built, in one line naming the blocks: a
required block of the wrong type, blocks that need each other, or a loop option a block says it
cannot run with (its ``unsupported_loop``).  :func:`assemble` builds the blocks in the order
their parameters give.
"""

from __future__ import annotations

import inspect
import random
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel

from harness.core.config import SLOTS, Composition, EmptySection, LoopConfig, RunConfig
from harness.core.errors import ConfigError
from harness.core.evaluator import BaseEvaluator
from harness.core.memory import BaseMemory
from harness.core.population import BasePopulation
from harness.core.prompt import BasePromptBuilder
from harness.core.proposer import BaseProposer
from harness.core.records import TaskInfo
from harness.core.rng import make_rng
from harness.core.scaffold import Scaffold
from harness.core.selection import BaseSelectionPolicy

__all__ = [
    "RESOURCES",
    "SLOT_BASES",
    "BlockSpec",
    "BuildEnv",
    "Need",
    "assemble",
    "block",
    "check",
]

F = TypeVar("F", bound=Callable[..., Any])

#: The base a block's type derives from decides its slot.
SLOT_BASES: Mapping[str, type] = types.MappingProxyType(
    {
        "population": BasePopulation,
        "selection_policy": BaseSelectionPolicy,
        "prompt": BasePromptBuilder,
        "proposer": BaseProposer,
        "evaluator": BaseEvaluator,
        "memory": BaseMemory,
    }
)
#: Ties in the build order go this way (it only orders blocks that do not depend on each other).
_TIES = ("evaluator", "population", "memory", "selection_policy", "proposer", "prompt")


@dataclass(frozen=True)
class BuildEnv:
    """What the run gives every block besides its config: the seed, the sandboxed evaluator,
    what may be shown of the task, the run id (to label containers for reaping) and the run's
    sandbox sessions (a ``harness.sandbox.sessions.SessionBackend`` served by the run's
    Runtime: where a block runs long-lived servers, e.g. EvoX strategies)."""

    seed: int
    evaluator: BaseEvaluator
    task: TaskInfo = field(default_factory=TaskInfo)
    run_id: str | None = None
    sessions: object | None = None


def _rng(env: BuildEnv, config: RunConfig, slot: str) -> random.Random:
    # Reference mode: the ported blocks draw from one stream seeded with the run seed, as the
    # references seed their global ``random``; blocks that share it in the reference pass it on.
    if config.loop.reference_mode:
        return random.Random(env.seed)
    return make_rng(env.seed, slot)


#: What a block may ask for by parameter name besides its config and other blocks.
RESOURCES: Mapping[str, Callable[[BuildEnv, RunConfig, str], Any]] = types.MappingProxyType(
    {
        "rng": _rng,
        "seed": lambda env, config, slot: env.seed,
        "task": lambda env, config, slot: env.task,
        "loop": lambda env, config, slot: config.loop,
        "general": lambda env, config, slot: config.general,
        "sessions": lambda env, config, slot: env.sessions,
        "run_id": lambda env, config, slot: env.run_id,
        "task_evaluator": lambda env, config, slot: env.evaluator,
    }
)


def block(name: str, summary: str) -> Callable[[F], F]:
    """Name a block (a class of a slot's base, or a function returning one) for compositions.

    The package lists it in its ``BLOCKS``; ``galapagos blocks`` shows ``summary``.  One
    function may be named once: a second name is a second function.
    """

    def named(make: F) -> F:
        make.__block__ = (name, summary)  # type: ignore[attr-defined]
        return make

    return named


@dataclass(frozen=True)
class Need:
    """A block's parameter that takes another slot's block."""

    slot: str
    #: What that block must be (a class or a Protocol).
    kind: type
    optional: bool = False

    def met_by(self, builds: type) -> bool:
        return _is_a(builds, self.kind)


@dataclass(frozen=True)
class BlockSpec:
    """One named implementation of a slot, read from its parameters."""

    slot: str
    name: str
    summary: str
    #: The class, or the function that returns the block.
    make: Callable[..., Any]
    #: The type ``make`` builds (a function's return annotation).
    builds: type
    #: Its config section's model (``EmptySection``: no ``config`` parameter).
    config: type[BaseModel] = EmptySection
    takes_config: bool = False
    needs: tuple[Need, ...] = ()
    resources: tuple[str, ...] = ()
    #: Where it is defined (module), for ``galapagos blocks``.
    source: str = ""

    @classmethod
    def of(cls, make: Callable[..., Any]) -> BlockSpec:
        """The spec of a block named with :func:`block`; a parameter the assembler cannot
        give is a ``TypeError`` naming it."""
        named = vars(make).get("__block__")
        if named is None:
            raise TypeError(f"{make!r} is not a named block (decorate it with @block)")
        name, summary = named
        hints, signature, builds = _introspect(make, name)
        slot = next((s for s, base in SLOT_BASES.items() if issubclass(builds, base)), None)
        if slot is None:
            raise TypeError(f"block {name!r}: {builds.__name__} derives from no slot's base")
        config: type[BaseModel] = EmptySection
        needs: list[Need] = []
        resources: list[str] = []
        for param in signature.parameters.values():
            kind = hints.get(param.name)
            if param.name == "config":
                if not (isinstance(kind, type) and issubclass(kind, BaseModel)):
                    raise TypeError(f"block {name!r}: config must be annotated with its model")
                config = kind
            elif param.name in SLOTS and param.name != slot:
                needs.append(_need(name, param.name, kind))
            elif param.name in RESOURCES:
                resources.append(param.name)
            else:
                raise TypeError(
                    f"block {name!r}: parameter {param.name!r} is not config, another slot "
                    f"({', '.join(s for s in SLOTS if s != slot)}) or a run resource "
                    f"({', '.join(RESOURCES)})"
                )
        return cls(
            slot=slot,
            name=name,
            summary=summary,
            make=make,
            builds=builds,
            config=config,
            takes_config="config" in signature.parameters,
            needs=tuple(needs),
            resources=tuple(resources),
            source=make.__module__,
        )

    @property
    def requires(self) -> dict[str, list[str]]:
        """The types it needs of other slots (``galapagos blocks`` shows them)."""
        return {n.slot: [n.kind.__name__] for n in self.needs if not n.optional}

    def unsupported(self, loop: LoopConfig) -> str:
        """Why this block cannot run with ``loop`` ("" if it can)."""
        refused: Mapping[str | tuple[str, ...], str] = getattr(self.builds, "unsupported_loop", {})
        for options, why in refused.items():
            names = (options,) if isinstance(options, str) else options
            if all(getattr(loop, option) for option in names):
                shown = " with ".join(f"loop.{option}" for option in names)
                return f"{self.slot} {self.name!r} cannot run with {shown}: {why}"
        return ""

    def describe(self) -> dict[str, Any]:
        return {
            "slot": self.slot,
            "name": self.name,
            "summary": self.summary,
            "builds": self.builds.__name__,
            # The types it is (what other blocks may ask for) and the types it asks for.
            "provides": [self.builds.__name__],
            "requires": self.requires,
            "optional": {n.slot: [n.kind.__name__] for n in self.needs if n.optional},
            "resources": list(self.resources),
            "unsupported_loop": {
                "+".join((k,) if isinstance(k, str) else k): why
                for k, why in getattr(self.builds, "unsupported_loop", {}).items()
            },
            "config": _config_fields(self.config),
            "source": self.source,
        }


def _introspect(
    make: Callable[..., Any], name: str
) -> tuple[dict[str, Any], inspect.Signature, type]:
    target = make.__init__ if isinstance(make, type) else make  # type: ignore[misc]
    try:
        hints = typing.get_type_hints(target)
    except NameError as exc:  # an annotation only imported under TYPE_CHECKING
        raise TypeError(f"block {name!r}: cannot resolve an annotation ({exc})") from exc
    signature = inspect.signature(make)
    builds = make if isinstance(make, type) else hints.get("return")
    if not isinstance(builds, type):
        raise TypeError(f"block {name!r}: annotate the class the function returns")
    return hints, signature, builds


def _need(name: str, slot: str, kind: Any) -> Need:
    optional = False
    if isinstance(kind, types.UnionType) or typing.get_origin(kind) is typing.Union:
        members = [k for k in typing.get_args(kind) if k is not type(None)]
        optional = len(members) < len(typing.get_args(kind))
        kind = members[0] if len(members) == 1 else None
    if not isinstance(kind, type):
        raise TypeError(
            f"block {name!r}: annotate {slot} with one class or Protocol (optionally | None)"
        )
    return Need(slot, kind, optional)


def _protocol_members(protocol: type) -> set[str]:
    names: set[str] = set()
    for base in protocol.__mro__:
        if base in (object, typing.Protocol, typing.Generic):
            continue
        names.update(vars(base))
        names.update(getattr(base, "__annotations__", {}))
    return {n for n in names if not n.startswith("_")}


def _is_a(builds: type, kind: type) -> bool:
    if getattr(kind, "_is_protocol", False):
        return all(hasattr(builds, member) for member in _protocol_members(kind))
    return issubclass(builds, kind)


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


def check(
    composition: Composition, catalog: Catalog, loop: LoopConfig | None = None
) -> dict[str, BlockSpec]:
    """The specs of a composition, or a one-line :class:`ConfigError`: the first block whose
    required block has the wrong type (naming both and the blocks that would fit), blocks
    that need each other, or (given ``loop``) a loop option a block cannot run with."""
    specs = {slot: lookup(catalog, slot, name) for slot, name in composition.named().items()}
    for slot in SLOTS:
        spec = specs[slot]
        for need in spec.needs:
            other = specs[need.slot]
            if need.optional or need.met_by(other.builds):
                continue
            fits = sorted(n for n, c in catalog.get(need.slot, {}).items() if need.met_by(c.builds))
            hint = f"; use one of: {', '.join(fits)}" if fits else ""
            raise ConfigError(
                f"incompatible blocks: {slot} {spec.name!r} needs a {need.slot} block that is a "
                f"{need.kind.__name__}, which {need.slot} {other.name!r} "
                f"({other.builds.__name__}) is not{hint}"
            )
    build_order(specs)
    if loop is not None:
        for slot in SLOTS:
            if why := specs[slot].unsupported(loop):
                raise ConfigError(f"incompatible loop: {why}")
    return specs


def _edges(specs: Mapping[str, BlockSpec]) -> dict[str, set[str]]:
    """Per slot, the slots whose blocks it gets (optional ones only when they fit)."""
    return {
        slot: {n.slot for n in spec.needs if n.met_by(specs[n.slot].builds)}
        for slot, spec in specs.items()
    }


def build_order(specs: Mapping[str, BlockSpec]) -> list[str]:
    """The slots in an order where every block comes after the blocks it gets; blocks that
    need each other are a :class:`ConfigError`."""
    edges = _edges(specs)
    order: list[str] = []
    while len(order) < len(edges):
        ready = [s for s in _TIES if s not in order and edges[s] <= set(order)]
        if not ready:
            stuck = [s for s in _TIES if s not in order]
            loop = ", ".join(
                f"{s} {specs[s].name!r} needs {', '.join(sorted(edges[s] - set(order)))}"
                for s in stuck
            )
            raise ConfigError(f"incompatible blocks: these blocks need each other: {loop}")
        order.append(ready[0])
    return order


def _arguments(
    spec: BlockSpec, config: RunConfig, env: BuildEnv, built: Mapping[str, Any]
) -> dict[str, Any]:
    args: dict[str, Any] = {}
    if spec.takes_config:
        args["config"] = getattr(config, spec.slot)
    for need in spec.needs:
        other = built.get(need.slot)  # absent: an optional block that did not fit
        args[need.slot] = other if other is not None and need.met_by(type(other)) else None
    for name in spec.resources:
        args[name] = RESOURCES[name](env, config, spec.slot)
    return args


def assemble(name: str, config: RunConfig, env: BuildEnv, catalog: Catalog) -> Scaffold:
    """Build the six blocks of ``config.blocks`` (checked, loop included) into a scaffold."""
    specs = check(config.blocks, catalog, config.loop)
    built: dict[str, Any] = {}
    for slot in build_order(specs):
        spec = specs[slot]
        made = spec.make(**_arguments(spec, config, env, built))
        if not isinstance(made, spec.builds):
            raise TypeError(f"block {spec.name!r} returned {type(made).__name__}")
        built[slot] = made
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


def index(blocks: Iterable[Callable[..., Any]]) -> dict[str, dict[str, BlockSpec]]:
    """Specs of named blocks by slot and name; a duplicate name within a slot is an error."""
    out: dict[str, dict[str, BlockSpec]] = {slot: {} for slot in SLOTS}
    for make in blocks:
        spec = BlockSpec.of(make)
        seen = out[spec.slot].get(spec.name)
        if seen is not None and seen.make is not make:
            raise ConfigError(
                f"two {spec.slot} blocks are named {spec.name!r} ({seen.source}, {spec.source})"
            )
        out[spec.slot][spec.name] = spec
    return out
