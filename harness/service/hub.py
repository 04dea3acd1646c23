"""The hub's state and its write operations (create, cancel, resume runs), shared by the API
and the pages; both are thin layers over these and the library functions of ``harness.runs``.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from harness.core.errors import ConfigError, TaskError
from harness.core.registry import list_scaffolds
from harness.runs import new_run_id, plan_resume, plan_run, run_status
from harness.service._db import ServiceDB
from harness.service.live import LiveHub
from harness.service.queue import RunQueue
from harness.service.settings import ServiceSettings
from harness.service.tasks import TaskRoots
from harness.store.base import RunRecord
from harness.store.sqlite import SQLiteStore

__all__ = ["Conflict", "Hub", "LaunchRequest"]

#: Config keys an API client may not set: the operator chooses the endpoint and where its key
#: comes from (a client could otherwise send the server's key to a host of its choosing).
_OPERATOR_KEYS = ("llm.api_base", "llm.api_key_env", "llm.provider", "task_config", "seed_from")
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,47}")


class Conflict(ConfigError):
    """The request does not fit the run's state (answered 409)."""


@dataclass(frozen=True)
class LaunchRequest:
    task: str
    scaffold: str | None = None
    #: A composition: ``{"name"?, "blocks": {slot: block}, "loop"?: {...}}``.
    composition: Mapping[str, Any] | None = None
    iterations: int | None = None
    seed: int | None = None
    overrides: Sequence[str] = ()


class Hub:
    def __init__(self, store: SQLiteStore, settings: ServiceSettings) -> None:
        self.settings = settings
        self.store = store
        self.store_path = store.path
        self.db = ServiceDB(store.path)
        self.live = LiveHub()
        self.tasks = TaskRoots(settings.task_roots)
        self.data_dir = settings.data_dir or store.path.parent / "hub"
        self.queue = RunQueue(
            store, self.db, workers=settings.workers, ray_address=settings.ray_address
        )
        store.add_listener(self.live.notify)
        self._local = threading.local()
        self._readers: list[SQLiteStore] = []
        self._readers_lock = threading.Lock()
        self._generation = 0

    # -- readers ----------------------------------------------------------------------------
    def reader(self) -> SQLiteStore:
        """This thread's read-only connection (readers never take the writer's lock)."""
        store: SQLiteStore | None = getattr(self._local, "store", None)
        if store is None or getattr(self._local, "generation", -1) != self._generation:
            store = SQLiteStore(self.store_path, read_only=True)
            self._local.store = store
            self._local.generation = self._generation
            with self._readers_lock:
                self._readers.append(store)
        return store

    def close(self) -> None:
        """Close every reader (a thread that reads again later opens a new one)."""
        with self._readers_lock:
            self._generation += 1
            for store in self._readers:
                store.close()
            self._readers.clear()

    # -- writes -----------------------------------------------------------------------------
    def launch(self, request: LaunchRequest) -> tuple[RunRecord, list[str]]:
        """Validate a new run completely, store it as ``queued`` and queue it."""
        if (request.scaffold is None) == (request.composition is None):
            raise ConfigError("give either scaffold (a name) or composition (blocks), not both")
        for item in request.overrides:
            key = item.split("=", 1)[0].strip()
            if "=" not in item or not key:
                raise ConfigError(f"override {item[:80]!r}: write it as section.key=value")
            if key == "llm" or any(key == k or key.startswith(k + ".") for k in _OPERATOR_KEYS):
                raise ConfigError(
                    f"override {key}: the hub's operator chooses the LLM endpoint "
                    "(galapagos serve --api-base/--model); it cannot be set per run"
                )
        if request.scaffold is not None and request.scaffold not in list_scaffolds():
            raise ConfigError(  # a name only: a path would let a client read any YAML file
                f"unknown scaffold {request.scaffold[:64]!r}; valid scaffolds: "
                f"{', '.join(list_scaffolds())} (or send a composition of blocks)"
            )
        task = self.tasks.resolve(request.task)
        scaffold = request.scaffold
        if request.composition is not None:
            scaffold = str(self._composition_file(request.composition))
        plan = plan_run(
            scaffold=scaffold,
            task=str(task.path),
            overrides=list(request.overrides),
            iterations=request.iterations,
            seed=request.seed,
            api_base=self.settings.api_base,
            models=self.settings.models,
        )
        initial = (plan.task.path / plan.task.card.initial_program).resolve()
        if not initial.is_relative_to(plan.task.path):
            raise TaskError(f"task {task.name}: its initial program lies outside the folder")
        if plan.config.evaluator.sandbox == "local" and not self.settings.allow_local_sandbox:
            raise ConfigError(
                "evaluator.sandbox=local runs LLM-written code on the hub's host; this hub "
                "allows only docker (galapagos serve --allow-local-sandbox changes that)"
            )
        record = RunRecord(
            id=new_run_id(),
            scaffold=plan.spec.name,
            task=plan.task.name,
            task_path=str(plan.task.path),
            config=plan.config.model_dump(mode="json"),
            seed=plan.config.seed,
            max_iterations=plan.config.general.max_iterations,
            status="queued",
            owner="",
            task_hash=plan.task.digest(),
        )
        self.store.create_run(record)
        self.db.enqueue(record.id, {})
        self.queue.submit(record.id)
        return self.store.get_run(record.id), list(plan.notes)

    def cancel(self, run_id: str) -> str:
        run = self.store.get_run(run_id)
        outcome = self.queue.cancel(run.id)
        if outcome == "idle":
            raise Conflict(
                f"run {run.id} is {run_status(run)}, not queued or running in this hub; "
                "nothing to cancel"
            )
        return outcome

    def resume(self, run_id: str, options: Mapping[str, Any]) -> RunRecord:
        run = self.store.get_run(run_id)
        status = run_status(run)
        if status in ("queued", "running") or run.id in self.queue.running():
            raise Conflict(f"run {run.id} is already {status}; wait for it or cancel it")
        kept = {k: v for k, v in options.items() if v is not None}
        plan_resume(self.store, run.id, **kept)  # every check now, before anything is queued
        self.store.update_run(run.id, status="queued", error="")
        self.db.enqueue(run.id, kept)
        self.queue.submit(run.id)
        return self.store.get_run(run.id)

    def _composition_file(self, composition: Mapping[str, Any]) -> Path:
        """The composition as a file (the run config keeps its blocks; the file is only how
        :func:`plan_run` reads a composition, named by its content)."""
        name = str(composition.get("name") or "custom")
        if not _NAME.fullmatch(name):
            raise ConfigError(
                f"composition name {name[:60]!r}: use lowercase letters, digits, '_' or '-'"
            )
        if name in list_scaffolds():
            raise ConfigError(
                f"composition name {name!r} is a shipped scaffold's; choose another name"
            )
        unknown = set(composition) - {"name", "blocks", "loop"}
        if unknown:
            raise ConfigError(
                f"composition keys {sorted(unknown)} unknown; a composition has name, blocks "
                "and loop"
            )
        data = {"name": name, "blocks": dict(composition.get("blocks") or {})}
        if composition.get("loop"):
            data["loop"] = dict(composition["loop"])
        text = yaml.safe_dump(data, sort_keys=True)
        digest = hashlib.sha256(text.encode()).hexdigest()[:12]
        folder = self.data_dir / "compositions"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{name}-{digest}.yaml"
        if not path.exists():
            path.write_text(text)
        return path
