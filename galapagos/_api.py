"""The public Python API: a search from a script or a notebook in three lines.

It sits on the same library functions as the CLI (:mod:`harness.runs`): a run started here is
an ordinary stored run (``galapagos show RUN`` shows it; ``galapagos resume RUN`` continues it),
and every untrusted program still runs in the sandbox the config names (Docker by default).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import logging
import os
import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from harness.core.controller import Progress
from harness.core.errors import ConfigError
from harness.core.records import Event, Program
from harness.core.registry import ScaffoldSpec, get_spec, list_scaffolds
from harness.core.store import RunRecord
from harness.evaluation.task import Task as _LoadedTask
from harness.evaluation.task import list_tasks, load_task
from harness.runs import RunPlan, Services, execute, plan_resume, plan_run
from harness.store import SQLiteStore, default_store_path

__all__ = [
    "Progress",
    "Result",
    "Scaffold",
    "Task",
    "aresume",
    "arun",
    "open_store",
    "resume",
    "run",
]

log = logging.getLogger("galapagos")

#: Said when a run uses the offline model (as the CLI says it).
OFFLINE_NOTE = (
    "LLM: the offline mutation model, NOT a language model: it perturbs numeric literals of the "
    "current program so the pipeline runs without an endpoint; for a real model give "
    'config={"llm": {"api_base": URL, "models": [{"name": MODEL}]}} (key in OPENAI_API_KEY)'
)

T = TypeVar("T")
StoreRef = str | os.PathLike[str] | SQLiteStore | None
ProgressHook = Callable[[Progress], None]


class Scaffold:
    """A search method: one of the shipped scaffolds by name, or a composition file (six
    named blocks, see ``galapagos blocks``).  Checked when made: an unknown name is a
    :class:`~harness.core.errors.ConfigError` that lists the valid ones.

    >>> Scaffold("openevolve").blocks["population"]
    'map_elites_islands'
    """

    def __init__(self, ref: str | os.PathLike[str]) -> None:
        self._spec: ScaffoldSpec = get_spec(str(ref))
        self.ref = str(ref)

    @staticmethod
    def names() -> list[str]:
        """The shipped scaffolds' names."""
        return list_scaffolds()

    @property
    def name(self) -> str:
        """The scaffold's name (a composition file's ``name``, else the file's stem)."""
        return self._spec.name

    @property
    def path(self) -> Path:
        """The composition file."""
        return self._spec.path

    @property
    def summary(self) -> str:
        """The card's one-line summary."""
        return self._spec.summary

    @property
    def blocks(self) -> dict[str, str]:
        """Slot → block name: the six blocks the loop wires together."""
        return self._spec.composition.named()

    def __repr__(self) -> str:
        return f"Scaffold({self.ref!r})"


class Task:
    """A problem to search: a shipped task by name, or a task folder (native ``task.yaml``,
    or an OpenEvolve/SkyDiscover folder as its authors wrote it).  Loaded and checked when
    made; ``config_file`` picks a compat folder's own config file (default ``config.yaml``).
    """

    def __init__(self, ref: str | os.PathLike[str], *, config_file: str | None = None) -> None:
        self._task: _LoadedTask = load_task(ref, config_file=config_file)
        self.ref = str(ref)
        self.config_file = config_file

    @staticmethod
    def names() -> list[str]:
        """The shipped tasks' names."""
        return list_tasks()

    @property
    def name(self) -> str:
        """The task's name (its card's ``name``)."""
        return self._task.name

    @property
    def path(self) -> Path:
        """The task folder."""
        return self._task.path

    @property
    def description(self) -> str:
        """What the model is told the problem is (description, objective, entry point)."""
        return self._task.prompt_description()

    @property
    def initial_program(self) -> str | None:
        """The program the search starts from (``None``: it starts from scratch)."""
        return self._task.initial_program

    def __repr__(self) -> str:
        return f"Task({self.ref!r})"


@dataclass(frozen=True)
class Result:
    """A stored run as a search's outcome: its best program and score history, read from
    the store it was written to (``store``; reading more: :mod:`harness.store`).

    ``status`` is ``completed``, ``interrupted`` (stopped; :func:`resume` continues it),
    ``failed`` or ``budget_exhausted``; ``stop_reason`` says why as data
    (:data:`harness.core.store.STOP_REASONS`)."""

    run_id: str
    status: str
    stop_reason: str
    iterations_done: int
    #: The best program (``None`` if not even the seed program could be evaluated).
    best: Program | None
    #: The seed program's score and the best score (higher is better).
    seed_score: float | None
    best_score: float | None
    #: ``(iteration, best score so far)`` for every iteration, in order.
    history: list[tuple[int, float | None]]
    #: The store the run lives in.
    store: SQLiteStore = field(repr=False, compare=False)
    #: What the run said while it was planned and ran (which model answered, settings of the
    #: task's folder applied or not used, …); also logged to the ``galapagos`` logger.
    notes: tuple[str, ...] = ()

    def __repr__(self) -> str:
        best = f"{self.best_score!r} ({self.best.id})" if self.best else "none"
        return (
            f"<Result run {self.run_id}: {self.status} ({self.stop_reason or '-'}), "
            f"{self.iterations_done} iterations, best {best}>"
        )

    @classmethod
    def load(cls, run_id: str, *, store: StoreRef = None) -> Result:
        """The result of a stored run (any run: from the CLI, the hub or this API)."""
        st = open_store(store)
        run = st.get_run(run_id)
        best = st.program(run.id, run.best_program_id) if run.best_program_id else None
        return cls(
            run_id=run.id,
            status=run.status,
            stop_reason=run.stop_reason,
            iterations_done=run.iterations_done,
            best=best,
            seed_score=run.seed_score,
            best_score=run.best_score,
            history=st.score_history(run.id),
            store=st,
        )

    @property
    def record(self) -> RunRecord:
        """The stored run: scaffold, task, config, tokens, cost, …"""
        return self.store.get_run(self.run_id)

    def programs(self) -> list[Program]:
        """Every program the run admitted, in order (the seed first)."""
        return self.store.programs(self.run_id)

    def events(self, *kinds: str) -> list[Event]:
        """The run's recorded decisions (all, or those of ``kinds``: ``select``, ``admit``…)."""
        return self.store.events(self.run_id, list(kinds) or None)


def open_store(store: StoreRef = None) -> SQLiteStore:
    """The run store: ``store`` itself, the file at ``store``, or the default one (the CLI's:
    ``$GALAPAGOS_STORE``, else ``~/.local/share/galapagos/store.sqlite``)."""
    if isinstance(store, SQLiteStore):
        return store
    return SQLiteStore(Path(store) if store is not None else default_store_path())


def run(
    scaffold: str | os.PathLike[str] | Scaffold,
    task: str | os.PathLike[str] | Task,
    *,
    iterations: int | None = None,
    seed: int | None = None,
    config: Mapping[str, Any] | str | os.PathLike[str] | None = None,
    store: StoreRef = None,
    on_progress: ProgressHook | None = None,
) -> Result:
    """Search ``task`` with ``scaffold`` and return the :class:`Result`.

    ``iterations``: LLM iterations after the seed program (default: the scaffold's);
    ``seed``: the run seed (RNGs, the offline model); ``config``: run settings as the YAML
    config has them — a mapping (``{"llm": {"api_base": …, "models": [{"name": …}]},
    "evaluator": {"sandbox": "docker"}}``) or the path of a YAML file; ``store``: where the run
    is stored (default: the CLI's store); ``on_progress``: called after each iteration.

    Without ``llm.api_base`` in ``config`` (or ``llm.provider: openai``, the endpoint then from
    ``OPENAI_BASE_URL``) the run uses the offline mutation model, which is not an LLM.
    Interrupting the call (Ctrl-C, a notebook's stop) stops the run after its iterations in
    flight; it stays resumable.  Bad input raises a :class:`~harness.core.errors.HarnessError`
    with a one-line message before anything runs."""
    return _block_on(
        lambda stop: arun(
            scaffold,
            task,
            iterations=iterations,
            seed=seed,
            config=config,
            store=store,
            on_progress=on_progress,
            stop=stop,
        )
    )


async def arun(
    scaffold: str | os.PathLike[str] | Scaffold,
    task: str | os.PathLike[str] | Task,
    *,
    iterations: int | None = None,
    seed: int | None = None,
    config: Mapping[str, Any] | str | os.PathLike[str] | None = None,
    store: StoreRef = None,
    on_progress: ProgressHook | None = None,
    stop: asyncio.Event | None = None,
) -> Result:
    """:func:`run` for code that has an event loop; ``stop``, once set, stops the run after
    its iterations in flight."""
    config_file, config_data = _config_layer(config)
    plan = plan_run(
        scaffold=scaffold.ref if isinstance(scaffold, Scaffold) else str(scaffold),
        task=task.ref if isinstance(task, Task) else str(task),
        task_config=task.config_file if isinstance(task, Task) else None,
        config_file=config_file,
        config_data=config_data,
        iterations=iterations,
        seed=seed,
    )
    return await _execute(plan, open_store(store), on_progress, stop)


def resume(
    run: str | Result,
    *,
    iterations: int | None = None,
    store: StoreRef = None,
    on_progress: ProgressHook | None = None,
) -> Result:
    """Continue a stopped run exactly where it stopped (or, with ``iterations``, a larger
    total, a completed one); returns its :class:`Result`.  ``run``: its id (a unique prefix is
    enough) or its result."""
    return _block_on(
        lambda stop: aresume(
            run, iterations=iterations, store=store, on_progress=on_progress, stop=stop
        )
    )


async def aresume(
    run: str | Result,
    *,
    iterations: int | None = None,
    store: StoreRef = None,
    on_progress: ProgressHook | None = None,
    stop: asyncio.Event | None = None,
) -> Result:
    """:func:`resume` for code that has an event loop."""
    if isinstance(run, Result):
        store = run.store if store is None else store
        run = run.run_id
    st = open_store(store)
    return await _execute(plan_resume(st, run, iterations=iterations), st, on_progress, stop)


async def _execute(
    plan: RunPlan,
    store: SQLiteStore,
    on_progress: ProgressHook | None,
    stop: asyncio.Event | None,
) -> Result:
    notes: list[str] = []

    def note(text: str) -> None:
        notes.append(text)
        log.warning("%s", text)

    for text in plan.notes:
        note(text)

    def on_start(run: RunRecord, services: Services) -> None:
        if services.llm_provider == "offline":
            note(OFFLINE_NOTE)
        for text in services.notices:
            note(text)

    summary = await execute(
        plan, store, on_start=on_start, on_progress=on_progress, stop=stop, on_notice=note
    )
    return dataclasses.replace(Result.load(summary.run_id, store=store), notes=tuple(notes))


def _config_layer(
    config: Mapping[str, Any] | str | os.PathLike[str] | None,
) -> tuple[Path | None, dict[str, Any] | None]:
    """A YAML file stays a file; a mapping is the user's config layer as it is (named
    ``config`` in messages; tuples read as lists)."""
    if config is None:
        return None, None
    if isinstance(config, str | os.PathLike):
        path = Path(config)
        if not path.is_file():
            raise ConfigError(f"config file {path} does not exist")
        return path, None
    if not isinstance(config, Mapping):
        raise ConfigError(f"config: give a mapping or a YAML file, not {type(config).__name__}")
    return None, _plain(config, "")


def _plain(value: Any, prefix: str) -> Any:
    """``value`` with its mappings as dicts (keys checked) and its tuples as lists."""
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str) or not key or "." in key or "=" in key:
                raise ConfigError(f"config: key {key!r} under {prefix or 'the top'} is not a name")
            out[key] = _plain(item, f"{prefix}{key}.")
        return out
    if isinstance(value, list | tuple):
        return [_plain(item, prefix) for item in value]
    return value


def _block_on(start: Callable[[asyncio.Event], Awaitable[T]]) -> T:
    """Run ``start(stop)`` to its end on an event loop of its own, in a worker thread (so it
    works the same under a notebook's running loop).  A KeyboardInterrupt while waiting sets
    ``stop`` (the run ends after its iterations in flight, resumable); a second one leaves."""
    ready = threading.Event()
    handles: dict[str, Any] = {}

    async def main() -> T:
        handles["loop"] = asyncio.get_running_loop()
        handles["stop"] = stop = asyncio.Event()
        ready.set()
        return await start(stop)

    pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="galapagos")
    future = pool.submit(asyncio.run, main())
    pool.shutdown(wait=False)  # its one thread ends with the run
    try:
        return future.result()
    except KeyboardInterrupt:
        ready.wait()
        with contextlib.suppress(RuntimeError):  # the run ended meanwhile: its loop is closed
            handles["loop"].call_soon_threadsafe(handles["stop"].set)
        return future.result()
