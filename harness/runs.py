"""Runs as library functions: plan, start, resume, inspect.  The CLI and the service are thin
layers over these.

A run needs three services besides the scaffold: a chat model (the offline mutation server on
loopback unless an endpoint is configured), a usage meter with the run's budget, and a task
evaluator over a sandbox backend.  :func:`open_services` starts and stops them together.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import secrets
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.core.blocks import BuildEnv
from harness.core.config import RunConfig, SeedFrom
from harness.core.config_layers import (
    Layer,
    Layers,
    Names,
    explain,
    file_layer,
    leaves,
    named,
    setting_layers,
)
from harness.core.controller import Controller, Progress, RunSummary
from harness.core.errors import ConfigError, LLMError, TaskError
from harness.core.evaluator import BaseEvaluator
from harness.core.records import TaskInfo
from harness.core.redact import redact_url
from harness.core.registry import (
    ScaffoldSpec,
    build_scaffold,
    chosen_blocks,
    compose,
    get_spec,
    list_scaffolds,
    user_layers,
    validate_stored,
)
from harness.core.rng import make_rng
from harness.core.scaffold import Scaffold
from harness.core.scoring import Objective
from harness.core.store import RunRecord
from harness.evaluation.task import Task, load_task
from harness.evaluation.task_notes import task_notes
from harness.evaluation.visible import model_view
from harness.llm.config import resolve_llm_config
from harness.llm.prices import require_prices
from harness.provenance import galapagos_version, git_commit
from harness.run_info import describe_run, failure_summary, run_status
from harness.store.owner import HEARTBEAT_S, owner_token, run_alive
from harness.store.protocols import LeasedRunStore, RunReader
from harness.store.sqlite import SQLiteStore, default_store_path

if TYPE_CHECKING:
    from harness.runtime import Runtime

__all__ = [
    "RunPlan",
    "Services",
    "describe_run",
    "execute",
    "failure_summary",
    "open_services",
    "open_store",
    "plan_resume",
    "plan_run",
    "run_status",
    "offline_llm",
    "seed_from_run",
]

Notice = Callable[[str], None]

#: The config key each keyword setting of :func:`plan_run` sets (a ``flag`` layer each).
SETTINGS = {
    "iterations": "general.max_iterations",
    "seed": "seed",
    "sandbox": "evaluator.sandbox",
    "max_cost": "llm.max_cost",
    "max_tokens": "llm.max_total_tokens",
    "keep_going": "general.max_consecutive_evaluator_errors",
}
#: The source of an ``llm`` value the endpoint's resolution set (provider, prices …).
RESOLVED = "resolved (endpoint, environment, price table)"


@dataclass(frozen=True)
class RunPlan:
    spec: ScaffoldSpec
    #: ``config.llm`` is resolved: CLI endpoint flags and the environment are folded in and the
    #: provider is explicit, so the stored config reproduces the endpoint on resume.
    config: RunConfig
    task: Task
    run: RunRecord | None = None  # set when resuming
    #: What resolving the endpoint overrode (shown as notices when the run starts).
    notes: tuple[str, ...] = ()
    #: Budget caps a resume changes: ``{"max_total_tokens": {"from": old, "to": new}, …}``.
    budget_change: Mapping[str, Any] = field(default_factory=dict)
    #: ``resume --iterations N``: the run's new total of LLM iterations.
    extend_to: int | None = None
    #: ``resume --api-base/--model``: the endpoint the run moves to (``{"from": …, "to": …}``).
    endpoint_change: Mapping[str, Any] = field(default_factory=dict)
    #: Every leaf of ``config`` with its value and source (``galapagos run --explain-config``).
    sources: tuple[tuple[str, Any, str], ...] = ()

    @property
    def seed_code(self) -> str | None:
        """The program iteration 0 evaluates: another run's (``run --from``) or the task's."""
        if self.config.seed_from is not None:
            return self.config.seed_from.code
        return self.task.initial_program


@dataclass
class Services:
    model: Any
    meter: Any
    evaluator: BaseEvaluator
    llm_description: str
    #: The provider the run talks to (``offline`` or ``openai``), as resolved.
    llm_provider: str
    notices: list[str] = field(default_factory=list)
    #: The run's sandbox sessions (EvoX strategy servers), served by its Runtime.
    sessions: Any = None


def open_store(path: Path | None = None) -> SQLiteStore:
    return SQLiteStore(path or default_store_path())


def plan_run(
    *,
    scaffold: str | None,
    task: str,
    config_file: Path | None = None,
    config_data: Mapping[str, Any] | None = None,
    overrides: list[str] | None = None,
    iterations: int | None = None,
    seed: int | None = None,
    api_base: str | None = None,
    models: tuple[str, ...] = (),
    sandbox: str | None = None,
    seed_from: SeedFrom | None = None,
    task_config: str | None = None,
    offline: bool = False,
    max_cost: float | None = None,
    max_tokens: int | None = None,
    keep_going: bool = False,
    names: Names | None = None,
) -> RunPlan:
    """Validate everything a run needs before anything starts (bad input fails here).

    The config is built from the layers of :mod:`harness.core.config_layers`: the scaffold's
    composition, the task's own defaults (its system message; a compat folder's config file,
    ``config.yaml`` or ``task_config``, also its search-level keys), the user's file
    (``config_file``, or ``config_data``: the same as a mapping), each override, then the
    keyword settings (:data:`SETTINGS`).  What the folder's file holds that is not used is
    named in one note.  ``names`` says how the caller calls its settings in messages (the CLI:
    its flags); unnamed, a setting is named by its keyword.

    ``seed_from`` starts the run from another run's program instead of the task's initial
    program (see :func:`seed_from_run`).  ``offline`` runs on the offline model whatever
    endpoint and models the task's or the user's config names (a note says which it
    replaced).  Without a scaffold (``scaffold``, or a ``scaffold:`` in the user's config) a
    compat folder runs the method it was written for."""
    loaded_task = load_task(task, config_file=task_config)
    user = _user_layer(config_file, config_data, names)
    notes: list[str] = []
    scaffold_given = scaffold is not None
    scaffold = scaffold or _folder_scaffold(loaded_task, user, notes, names)
    if offline and (api_base or models):
        raise ConfigError(
            f"{named(names, 'offline')} runs the offline model: drop "
            f"{named(names, 'api_base')} and {named(names, 'models')}"
        )
    given = {"iterations": iterations, "seed": seed, "sandbox": sandbox, "max_cost": max_cost,
             "max_tokens": max_tokens, "keep_going": 0 if keep_going else None}  # fmt: skip
    settings = setting_layers(
        {key: given[kw] for kw, key in SETTINGS.items()},
        {key: named(names, kw) for kw, key in SETTINGS.items()},
    )
    spec, upper = user_layers(
        scaffold, user=user, overrides=overrides, settings=settings, names=names
    )
    task_layer = loaded_task.config_layer(chosen_blocks(spec, upper))
    config, layers = compose(spec, upper, task_layer)
    endpoint = {"llm.api_base": api_base, "llm.models": list(models) or None}
    layers = Layers([*layers, *setting_layers(endpoint, _endpoint_names(names))])
    resolved, derived, llm_notes = _resolve_llm(config, api_base, models, offline, names)
    if offline:  # the offline note comes first
        notes.append(llm_notes.pop(0))
    config = resolved.model_copy(update={"seed_from": seed_from, "task_config": task_config})
    derived["scaffold"] = _scaffold_source(scaffold_given, user, loaded_task, names)
    if seed_from is not None:
        derived["seed_from"] = named(names, "seed_from")
    if task_config is not None:
        derived["task_config"] = named(names, "task_config")
    notes += [*layers.replaced(list(SETTINGS.values())), *llm_notes]
    notes += task_notes(loaded_task, config, layers, names)
    notes += _requirements_note(loaded_task.card)
    return RunPlan(
        spec,
        config,
        loaded_task,
        notes=tuple(notes),
        sources=tuple(explain(config, layers, derived)),
    )


def _user_layer(
    config_file: Path | None, config_data: Mapping[str, Any] | None, names: Names | None
) -> Layer | None:
    """The user's config: a file, or a mapping named as the caller names it."""
    if config_file is not None:
        return file_layer("config", config_file)
    if config_data is not None:
        return Layer("config", named(names, "config"), dict(config_data))
    return None


def _scaffold_source(given: bool, user: Layer | None, task: Task, names: Names | None) -> str:
    """Who chose the scaffold: the caller, the user's config, or a compat folder's method."""
    if given:
        return named(names, "scaffold")
    if user is not None and user.sets("scaffold"):
        return user.where("scaffold")
    folder = task.folder_config
    return f"{folder.path} (its method)" if folder is not None else named(names, "scaffold")


def _folder_scaffold(
    task: Task, user: Layer | None, notes: list[str], names: Names | None
) -> str | None:
    """The scaffold of a compat folder's method when neither the caller nor the user's config
    names one (a note says so); ``None`` for other tasks."""
    folder = task.folder_config
    if folder is None or (user is not None and user.data.get("scaffold")):
        return None
    if folder.scaffold is None:
        raise ConfigError(
            f"{folder.path}: search.type {folder.method} has no Galapagos scaffold; choose "
            f"one with {named(names, 'scaffold')} (one of: {', '.join(list_scaffolds())})"
        )
    notes.append(
        f"scaffold: {folder.scaffold}, the method {folder.path.name} is written for "
        f"(choose another with {named(names, 'scaffold')})"
    )
    return folder.scaffold


def _endpoint_names(names: Names | None) -> dict[str, str]:
    return {"llm.api_base": named(names, "api_base"), "llm.models": named(names, "models")}


def _resolve_llm(
    config: RunConfig,
    api_base: str | None,
    models: tuple[str, ...],
    offline: bool,
    names: Names | None,
) -> tuple[RunConfig, dict[str, str], list[str]]:
    """``config`` with its endpoint resolved (``offline``: the offline model), the source of
    each ``llm`` value that changed, and the notes (the offline note first)."""
    notes: list[str] = []
    before = config
    if offline:
        config, note = offline_llm(config, names)
        notes.append(note)
    resolved = resolve_llm_config(config.llm, api_base=api_base, models=models, names=names)
    config = config.model_copy(update={"llm": resolved.as_config()})
    endpoint = {"llm.api_base": api_base, "llm.models": models}
    derived: dict[str, str] = {}
    was = dict(leaves(before.llm.model_dump(mode="json"), "llm."))
    for key, value in leaves(config.llm.model_dump(mode="json"), "llm."):
        if was.get(key, object()) == value:
            continue
        given = next((k for k, v in endpoint.items() if v and key.startswith(k)), None)
        derived[key] = (
            named(names, "offline")
            if offline
            else _endpoint_names(names)[given]
            if given
            else RESOLVED
        )
    return config, derived, [*notes, *resolved.notes]


def _requirements_note(card: Any) -> list[str]:
    if not card.requirements:
        return []
    return [
        f"requirements.txt lists {', '.join(card.requirements)}: candidates run in image "
        f"{card.image} (built on first use)"
    ]


def offline_llm(config: RunConfig, names: Names | None = None) -> tuple[RunConfig, str]:
    """``config`` on the offline model (its offline settings kept), and a note naming the
    endpoint and models it replaces (``--offline``)."""
    llm = config.llm
    replaced = []
    if llm.api_base:
        replaced.append(llm.api_base)
    if llm.models:
        replaced.append("models " + ", ".join(m.name for m in llm.models))
    if llm.guide_models:
        replaced.append("guide models " + ", ".join(m.name for m in llm.guide_models))
    offline = type(llm).model_validate(
        {"provider": "offline", "offline": llm.offline.model_dump(), "timeout_s": llm.timeout_s}
    )
    what = f" instead of {'; '.join(replaced)}" if replaced else ""
    return (
        config.model_copy(update={"llm": offline}),
        f"{named(names, 'offline')}: the offline model (not an LLM) answers{what}",
    )


def seed_from_run(store: RunReader, run_id: str, program_id: str | None = None) -> SeedFrom:
    """The best program (or ``program_id``) of a stored run, to start a new run from."""
    run = store.get_run(run_id)
    wanted = program_id or run.best_program_id
    if wanted is None:
        raise ConfigError(f"run {run.id} has no program to start from yet")
    program = next((p for p in store.programs(run.id) if p.id == wanted), None)
    if program is None:
        raise ConfigError(f"run {run.id} has no program {wanted!r}; see galapagos show {run.id}")
    return SeedFrom(run_id=run.id, program_id=program.id, code=program.code)


def plan_resume(
    store: RunReader,
    run_id: str,
    *,
    max_total_tokens: int | None = None,
    max_cost: float | None = None,
    iterations: int | None = None,
    api_base: str | None = None,
    models: tuple[str, ...] = (),
    names: Names | None = None,
) -> RunPlan:
    """Check that ``run_id`` can continue; optionally give it new budget caps, or a larger
    number of iterations (which also continues a completed run), or move it to another
    endpoint or model (``api_base``, ``models``: its endpoint moved, or a model was renamed).

    A new cap must be above what the run has already used (or it would stop at once); it is
    stored with the run and recorded as a ``budget_changed`` event by the first iteration the
    resumed run commits.  A new endpoint is stored the same way, as an ``endpoint_changed``
    event (the URLs redacted).  ``names`` says how the caller calls its settings in messages.
    """
    check_caps(max_total_tokens, max_cost, names)
    run = store.get_run(run_id)
    if iterations is not None and iterations <= run.max_iterations:
        raise ConfigError(
            f"{named(names, 'iterations')} {iterations}: run {run.id} already has "
            f"{run.max_iterations} "
            f"iterations; give a larger total to extend it"
        )
    if run.status == "completed" and iterations is None:
        raise ConfigError(
            f"run {run.id} already completed all {run.max_iterations} iterations; extend it "
            f"with {named(names, 'iterations')} N (N > {run.max_iterations}) or start a new "
            f"run from its best program ({named(names, 'seed_from')} {run.id})"
        )
    if run_alive(run):
        raise ConfigError(f"run {run.id} is still running (owner {run.owner})")
    config = validate_stored(
        _upgrade_stored(run.config, run.scaffold), source=f"stored config of run {run.id}"
    )
    spec = _stored_spec(run, config)
    stored = config
    config, change = _new_caps(run, config, max_total_tokens, max_cost, names)
    config, moved = _new_endpoint(config, api_base, models, names)
    if max_cost is not None:  # a cap over a model of unknown price could never trigger
        llm = config.llm
        require_prices([*llm.models, *llm.guide_models], max_cost, llm.price_table or "?")
    if iterations is not None:
        general = config.general.model_copy(update={"max_iterations": iterations})
        config = config.model_copy(update={"general": general})
    task_ref = run.task_path if run.task_path and Path(run.task_path).is_dir() else run.task
    task = load_task(task_ref, config_file=config.task_config)
    if run.task_hash and task.digest() != run.task_hash:
        raise TaskError(
            f"task {task.name} changed since run {run.id} started (its files differ); "
            "a resumed run would not be comparable — start a new run instead"
        )
    return RunPlan(
        spec,
        config,
        task,
        run=run,
        budget_change=change,
        extend_to=iterations,
        endpoint_change=moved,
        notes=tuple(moved.get("notes", ())),
        sources=tuple(_resumed_sources(run.id, stored, config, names)),
    )


def _resumed_sources(
    run_id: str, stored: RunConfig, config: RunConfig, names: Names | None
) -> list[tuple[str, Any, str]]:
    """Every leaf of a resumed run's config: the stored config's, or the setting that
    changed it."""
    which = {"general.max_iterations": "iterations", "llm.max_total_tokens": "max_tokens",
             "llm.max_cost": "max_cost", "llm.models": "models", "llm": "api_base"}  # fmt: skip
    was = dict(leaves(stored.model_dump(mode="json")))
    derived = {}
    for key, value in leaves(config.model_dump(mode="json")):
        if was.get(key, object()) != value:
            keyword = next((kw for prefix, kw in which.items() if key.startswith(prefix)), "resume")
            derived[key] = named(names, keyword)
    return explain(config, Layers(), derived, default=f"stored config of run {run_id}")


def _endpoint_view(llm: Any) -> dict[str, Any]:
    return {
        "provider": llm.provider,
        "api_base": redact_url(llm.api_base),
        "models": [m.name for m in llm.models],
    }


def _new_endpoint(
    config: RunConfig, api_base: str | None, models: tuple[str, ...], names: Names | None = None
) -> tuple[RunConfig, dict[str, Any]]:
    """``config`` talking to ``api_base``/``models`` instead (resolved as ``run`` resolves its
    flags), and what changed; nothing when neither is given or nothing differs."""
    if api_base is None and not models:
        return config, {}
    resolved = resolve_llm_config(config.llm, api_base=api_base, models=models, names=names)
    new = resolved.as_config()
    before, after = _endpoint_view(config.llm), _endpoint_view(new)
    if before == after:
        return config, {}
    change = {"from": before, "to": after, "notes": list(resolved.notes)}
    return config.model_copy(update={"llm": new}), change


def check_caps(
    max_total_tokens: int | None, max_cost: float | None, names: Names | None = None
) -> None:
    """New budget caps must be positive (a one-line ``ConfigError`` naming the setting)."""
    if max_total_tokens is not None and max_total_tokens <= 0:
        raise ConfigError(
            f"{named(names, 'max_tokens')} {max_total_tokens}: give a number of tokens above 0"
        )
    if max_cost is not None and not (math.isfinite(max_cost) and max_cost > 0):
        raise ConfigError(f"{named(names, 'max_cost')} {max_cost}: give a finite cost above 0")


def _new_caps(
    run: RunRecord,
    config: RunConfig,
    max_total_tokens: int | None,
    max_cost: float | None,
    names: Names | None = None,
) -> tuple[RunConfig, dict[str, Any]]:
    """``config`` with the requested caps, and what changed; refuses caps already spent."""
    llm = config.llm
    tokens_flag, cost_flag = named(names, "max_tokens"), named(names, "max_cost")
    if max_total_tokens is not None and max_total_tokens <= run.tokens:
        raise ConfigError(
            f"{tokens_flag} {max_total_tokens} would stop run {run.id} at once: it has used "
            f"{run.tokens} tokens; pass a larger cap"
        )
    if max_cost is not None and max_cost <= run.cost:
        raise ConfigError(
            f"{cost_flag} {max_cost:g} would stop run {run.id} at once: it has spent "
            f"{run.cost:.4f}; pass a larger cap"
        )
    tokens_cap = llm.max_total_tokens if max_total_tokens is None else max_total_tokens
    cost_cap = llm.max_cost if max_cost is None else max_cost
    if tokens_cap is not None and run.tokens >= tokens_cap:
        raise ConfigError(
            f"run {run.id} has spent its token budget ({run.tokens} of llm.max_total_tokens="
            f"{tokens_cap}); resume it with {tokens_flag} N, N above {run.tokens}"
        )
    if cost_cap is not None and run.cost >= cost_cap:
        raise ConfigError(
            f"run {run.id} has spent its cost budget ({run.cost:.4f} of llm.max_cost="
            f"{cost_cap:g}); resume it with {cost_flag} X, X above {run.cost:.4f}"
        )
    change: dict[str, Any] = {}
    if max_total_tokens is not None and max_total_tokens != llm.max_total_tokens:
        change["max_total_tokens"] = {"from": llm.max_total_tokens, "to": max_total_tokens}
    if max_cost is not None and max_cost != llm.max_cost:
        change["max_cost"] = {"from": llm.max_cost, "to": max_cost}
    if not change:
        return config, change
    caps = {"max_total_tokens": tokens_cap, "max_cost": cost_cap}
    new_llm = type(llm).model_validate({**llm.model_dump(), **caps})
    return config.model_copy(update={"llm": new_llm}), change


def _stored_spec(run: RunRecord, config: RunConfig) -> ScaffoldSpec:
    """The spec a stored run was made from: its shipped scaffold, else (a user's composition
    file, which need not exist any more) one rebuilt from the stored composition."""
    if run.scaffold in list_scaffolds():
        return get_spec(run.scaffold)
    return ScaffoldSpec(name=run.scaffold, path=Path(f"{run.scaffold}.yaml"))


def _upgrade_stored(config: Mapping[str, Any], scaffold: str) -> dict[str, Any]:
    """A stored config as this version reads it.

    Runs stored before ``llm`` was resolved at start hold the dumped default
    ``provider: offline`` beside the ``api_base`` they ran with; such a run ran online (an
    explicit offline provider with an api_base never validated), so say so.  Runs stored
    before scaffolds were compositions have no ``blocks``: their scaffold's composition is it.
    EvoX runs stored while strategy fault injection was a setting hold ``memory.offline_faults``
    (now a test seam of the offline model): dropped.
    """
    data = dict(config)
    if "blocks" not in data and scaffold in list_scaffolds():
        data["blocks"] = get_spec(scaffold).defaults().get("blocks")
    memory = data.get("memory")
    if isinstance(memory, Mapping) and "offline_faults" in memory:
        data["memory"] = {k: v for k, v in memory.items() if k != "offline_faults"}
    llm = data.get("llm")
    if isinstance(llm, Mapping) and llm.get("provider") == "offline" and llm.get("api_base"):
        data["llm"] = {**llm, "provider": "openai"}
    return data


@asynccontextmanager
async def open_services(
    plan: RunPlan, run_id: str, runtime: Runtime | None = None
) -> AsyncIterator[Services]:
    """Start the chat model, meter, sandboxed evaluator and strategy sessions; stop all of them
    on exit.

    Everything comes from ``runtime`` (its sandbox backend and canaries, its offline model
    server and endpoint clients); without one the run is a Runtime of one, closed with it."""
    from harness.evaluation.driver import TaskEvaluator
    from harness.llm.usage import UsageMeter
    from harness.runtime import Runtime, lone_run_containers

    resolved = resolve_llm_config(plan.config.llm)  # already resolved: this reads the key
    notices = list(dict.fromkeys([*plan.notes, *resolved.notes]))  # plan_run has some already
    async with AsyncExitStack() as stack:
        if runtime is None:
            # Its cap on evaluations at once, and a warm container more than that.
            cap = plan.config.evaluator.max_concurrent or lone_run_containers()
            runtime = await stack.enter_async_context(
                Runtime(max_containers=cap, pool_size=cap + 1)
            )
        shared = runtime
        ev = plan.config.evaluator
        limits = plan.task.card.limits.to_limits()
        if ev.timeout_s is not None:
            limits = dataclasses.replace(limits, wall_s=ev.timeout_s)
        if ev.memory_mb is not None:
            limits = dataclasses.replace(limits, memory_mb=ev.memory_mb)

        prewarmed = asyncio.Event()

        async def sandbox() -> TaskEvaluator:
            # The canaries (once per runtime) run first in the run's first container when its
            # image allows, else in their own meanwhile; their verdict gates every job of the
            # backend, and the run's start.
            backend = await shared.backend(ev, run_id, wait_for_canaries=False)
            shared.canaries_in_pool(backend, plan.task.card.image)
            evaluator = TaskEvaluator(
                plan.task, backend, run_id=run_id, limits=limits, warm_python=ev.warm_python
            )
            try:
                await evaluator.prewarm()  # the run's first containers start (no job)
                prewarmed.set()
                await backend.ready()  # the canaries passed (fail closed)
            except BaseException:
                await evaluator.aclose()
                raise
            return evaluator

        # The canaries and the run's first containers start while the LLM client is set up
        # (no candidate runs before the canaries passed: fail closed).  The client is set up
        # once the containers were asked for: its set-up holds the event loop (and the GIL)
        # for ≈0.1 s, which would otherwise delay the engine's start of the container.
        starting = asyncio.ensure_future(sandbox())
        asked = asyncio.ensure_future(prewarmed.wait())
        try:
            # (or it failed first: its error is raised where it is awaited, below)
            await asyncio.wait((starting, asked), return_when=asyncio.FIRST_COMPLETED)
            asked.cancel()
            meter = UsageMeter(resolved.max_total_tokens, resolved.max_cost)
            rng = make_rng(plan.config.seed, "llm.ensemble")
            client = await runtime.llm(resolved, rng=rng, meter=meter)
            stack.push_async_callback(client.aclose)
            if resolved.provider != "offline":
                try:
                    info = await client.check_endpoint()
                except LLMError as exc:
                    folder = plan.task.folder_config
                    if folder is None or folder.search.get("llm.api_base") != resolved.api_base:
                        raise
                    raise type(exc)(
                        f"{exc} (the endpoint is the task folder's: llm.api_base in "
                        f"{folder.path}; pass --api-base to use another)"
                    ) from exc
                if info.missing:
                    notices.append(f"the endpoint does not list model(s) {', '.join(info.missing)}")
        except BaseException:
            asked.cancel()
            starting.cancel()
            done = (await asyncio.gather(starting, return_exceptions=True))[0]
            if isinstance(done, TaskEvaluator):
                await done.aclose()
            raise
        evaluator = await starting
        stack.push_async_callback(evaluator.aclose)  # drops this run's warm containers
        yield Services(
            model=client,
            meter=meter,
            evaluator=evaluator,
            llm_description=resolved.describe(),
            llm_provider=resolved.provider,
            notices=notices,
            sessions=await runtime.sessions(ev, run_id),
        )


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


async def execute(
    plan: RunPlan,
    store: LeasedRunStore,
    *,
    on_start: Callable[[RunRecord, Services], None] | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    stop: asyncio.Event | None = None,
    runtime: Runtime | None = None,
    run_id: str | None = None,
    on_notice: Callable[[str], None] | None = None,
) -> RunSummary:
    """Start a new run (or continue ``plan.run``) and drive it to its end.

    ``runtime``: services shared with other runs of this process (see :mod:`harness.runtime`);
    ``run_id``: the new run's id, chosen by the caller (a benchmark records it first);
    ``on_notice``: told what the run finds worth saying while it runs (e.g. that its score is
    an average of metrics)."""
    run_id = plan.run.id if plan.run else (run_id or new_run_id())
    async with open_services(plan, run_id, runtime) as services:
        card = plan.task.card
        env = BuildEnv(
            seed=plan.config.seed,
            evaluator=services.evaluator,
            task=TaskInfo(
                name=plan.task.name,
                description=plan.task.prompt_description(),
                language=card.language,
                eval_timeout_s=plan.config.evaluator.timeout_s or card.limits.wall_s,
                model_context=model_view(plan.task),
            ),
            run_id=run_id,
            sessions=services.sessions,
        )
        scaffold = build_scaffold(plan.spec, plan.config, env)
        parallel = plan.config.general.max_parallel_iterations
        if parallel > 1 and not scaffold.parallel_ok:
            services.notices.append(
                f"general.max_parallel_iterations={parallel} ignored: {plan.spec.name} runs its "
                "iterations one at a time (each depends on the previous one's outcome)"
            )
        try:
            if parallel > 1 and scaffold.parallel_ok:
                prewarm = getattr(services.evaluator, "prewarm", None)
                if prewarm is not None:
                    # Containers for the iterations in flight (as many as the run's caps let
                    # run at once) start now, while its first one (asked for at start-up) runs
                    # the canaries and the seed: the first wave finds them ready.
                    await prewarm(parallel)
            return await _drive(
                plan, store, services, scaffold, run_id, on_start, on_progress, stop, on_notice
            )
        finally:
            await scaffold.aclose()


async def _drive(
    plan: RunPlan,
    store: LeasedRunStore,
    services: Services,
    scaffold: Scaffold,
    run_id: str,
    on_start: Callable[[RunRecord, Services], None] | None,
    on_progress: Callable[[Progress], None] | None,
    stop: asyncio.Event | None,
    on_notice: Callable[[str], None] | None,
) -> RunSummary:
    me = owner_token()
    if plan.run is not None:
        run = plan.run
        holder = store.leases.claim_run(run.id, me)  # atomic: a run is never resumed twice
        if holder:
            raise ConfigError(f"run {run.id} is still running (owner {holder})")
        store.leases.fence(run.id, me)
    else:
        run = RunRecord(
            id=run_id,
            scaffold=plan.spec.name,
            task=plan.task.name,
            task_path=str(plan.task.path),
            config=plan.config.model_dump(mode="json"),
            seed=plan.config.seed,
            max_iterations=plan.config.general.max_iterations,
            owner=me,
            task_hash=plan.task.digest(),
            heartbeat_at=time.time(),
        )
        store.create_run(run)
        store.leases.fence(run.id, me)
    controller = Controller(
        scaffold,
        store=store,
        run=run,
        model=services.model,
        meter=services.meter,
        general=plan.config.general,
        seed_code=plan.seed_code,
        on_progress=on_progress,
        objective=task_objective(plan.task),
        on_notice=on_notice,
    )
    made_by: dict[str, Any] = {"galapagos": galapagos_version(), "commit": git_commit()}
    if plan.run is None:
        controller.note("run_started", **made_by)
    else:
        controller.restore()
        started = store.events(run.id, ["run_started", "run_resumed"])
        if not started or {k: started[-1].payload.get(k) for k in made_by} != made_by:
            # Only another version is worth an event: a resume by the same one leaves the run
            # as if it had never stopped (resume tests compare events with uninterrupted runs).
            controller.note("run_resumed", **made_by)
        if plan.endpoint_change:
            change = {k: v for k, v in plan.endpoint_change.items() if k != "notes"}
            controller.note(
                "endpoint_changed",
                run_updates={"config": plan.config.model_dump(mode="json")},
                **change,
            )
        if plan.budget_change:
            controller.note(
                "budget_changed",
                run_updates={"config": plan.config.model_dump(mode="json")},
                **plan.budget_change,
            )
        if plan.extend_to is not None:
            store.update_run(
                run.id,
                max_iterations=plan.extend_to,
                config=plan.config.model_dump(mode="json"),
            )
            controller.note("run_extended", previous=run.max_iterations, total=plan.extend_to)
    if on_start:
        on_start(store.get_run(run.id), services)
    watchers = [asyncio.create_task(_heartbeat(store, run.id, me, controller))]
    if stop:
        watchers.append(asyncio.create_task(_watch(stop, controller)))
    try:
        return await controller.run_to_end()
    finally:
        for watcher in watchers:
            watcher.cancel()
        store.leases.fence(run.id, None)


def task_objective(task: Task) -> Objective:
    """What a run on ``task`` maximises: a native card's objective, else the reference's rule."""
    native = (task.path / "task.yaml").is_file() and task.folder_config is None
    return Objective(metric=task.card.metric, direction=task.card.direction, native=native)


async def _watch(stop: asyncio.Event, controller: Controller) -> None:
    await stop.wait()
    controller.request_stop()


async def _heartbeat(store: LeasedRunStore, run_id: str, me: str, controller: Controller) -> None:
    """Beat while the run executes; a run another process took over stops here."""
    while True:
        await asyncio.sleep(HEARTBEAT_S)
        if not store.leases.beat(run_id, me):
            controller.request_stop("owner_lost")
            return
