"""The hub's state and its write operations (create, cancel, resume runs), shared by the API
and the pages; both are thin layers over these and the library functions of ``harness.runs``.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.core.errors import ConfigError, TaskError
from harness.core.redact import redact_url
from harness.core.registry import list_scaffolds
from harness.core.store import RunRecord
from harness.runs import new_run_id, plan_resume, plan_run, run_status
from harness.service._db import ServiceDB, TokenInfo
from harness.service.live import LiveHub
from harness.service.policy import HubPolicy, composition_file
from harness.service.queue import RunQueue
from harness.service.schemas import API_NAMES
from harness.service.settings import ServiceSettings
from harness.service.tasks import TaskRoots
from harness.store.protocols import StoreReader
from harness.store.reader import SQLiteReader
from harness.store.sqlite import SQLiteStore

__all__ = ["Conflict", "Forbidden", "Hub", "LaunchRequest", "OverQuota"]


class Conflict(ConfigError):
    """The request does not fit the run's state (answered 409)."""


class Forbidden(ConfigError):
    """The caller's token may not do this (answered 403)."""


class OverQuota(ConfigError):
    """The caller holds all it may at once (answered 429 with ``Retry-After``)."""

    def __init__(self, message: str, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


#: Seconds a client over its queued-run quota is told to wait (runs take minutes).
QUEUE_RETRY_S = 60


@dataclass(frozen=True)
class LaunchRequest:
    task: str
    scaffold: str | None = None
    #: A composition: ``{"name"?, "blocks": {slot: block}, "loop"?: {...}}``.
    composition: Mapping[str, Any] | None = None
    iterations: int | None = None
    seed: int | None = None
    overrides: Sequence[str] = ()


class ReaderPool:
    """A fixed number of read-only store connections shared by every request thread.

    A connection serialises its own queries (the store's lock), so handing them out in turn
    is safe; the number of open files stays the pool's, however many threads the server
    starts or retires (one connection per thread leaked a connection per retired thread)."""

    def __init__(self, path: Any, size: int) -> None:
        self.path = path
        self.size = max(1, size)
        self._stores: list[SQLiteReader] = []
        self._turn = itertools.count()
        self._lock = threading.Lock()

    def get(self) -> SQLiteReader:
        with self._lock:
            while len(self._stores) < self.size:  # all at once: open files stay constant
                self._stores.append(SQLiteReader(self.path))
            return self._stores[next(self._turn) % self.size]

    def close(self) -> None:
        with self._lock:
            for store in self._stores:
                store.close()
            self._stores.clear()


class Hub:
    def __init__(self, store: SQLiteStore, settings: ServiceSettings) -> None:
        self.settings = settings
        self.store = store
        self.store_path = store.path
        self.db = ServiceDB(store.path, connections=settings.reader_connections)
        self.db.warm()
        self.live = LiveHub(settings)
        self.tasks = TaskRoots(settings.task_roots)
        self.data_dir = settings.data_dir or store.path.parent / "hub"
        self.policy = HubPolicy(settings, self.tasks, self.data_dir)
        self.queue = RunQueue(
            store,
            self.db,
            workers=settings.workers,
            policy=self.policy,
            ray_address=settings.ray_address,
        )
        store.add_listener(self.live.notify)
        self.readers = ReaderPool(store.path, settings.reader_connections)
        self._queue_lock = threading.Lock()

    def reader(self) -> StoreReader:
        """A read-only connection of the pool (readers never take the writer's lock)."""
        return self.readers.get()

    def close(self) -> None:
        self.readers.close()
        self.db.close()

    # -- writes -----------------------------------------------------------------------------
    def launch(
        self, request: LaunchRequest, token: TokenInfo | None = None
    ) -> tuple[RunRecord, list[str]]:
        """Validate a new run completely (the hub's policy included), store it as ``queued``
        and queue it."""
        if (request.scaffold is None) == (request.composition is None):
            raise ConfigError("give either scaffold (a name) or composition (blocks), not both")
        self.policy.check_overrides(request.overrides)
        if request.scaffold is not None and request.scaffold not in list_scaffolds():
            raise ConfigError(  # a name only: a path would let a client read any YAML file
                f"unknown scaffold {request.scaffold[:64]!r}; valid scaffolds: "
                f"{', '.join(list_scaffolds())} (or send a composition of blocks)"
            )
        task = self.tasks.resolve(request.task)
        scaffold = request.scaffold
        if request.composition is not None:
            scaffold = str(composition_file(self.data_dir / "compositions", request.composition))
        plan = plan_run(
            scaffold=scaffold,
            task=str(task.path),
            overrides=list(request.overrides),
            iterations=request.iterations,
            seed=request.seed,
            api_base=self.settings.api_base,
            models=self.settings.models,
            names=API_NAMES,
        )
        initial = (plan.task.path / plan.task.card.initial_program).resolve()
        if not initial.is_relative_to(plan.task.path):
            raise TaskError(f"task {task.name}: its initial program lies outside the folder")
        self.policy.check_plan(plan)
        config = plan.config.model_dump(mode="json")
        if config["llm"].get("api_base"):  # the store never holds the endpoint's credentials
            config["llm"]["api_base"] = redact_url(config["llm"]["api_base"])
        record = RunRecord(
            id=new_run_id(),
            scaffold=plan.spec.name,
            task=plan.task.name,
            task_path=str(plan.task.path),
            config=config,
            seed=plan.config.seed,
            max_iterations=plan.config.general.max_iterations,
            status="queued",
            owner="",
            task_hash=plan.task.digest(),
        )
        with self._queue_lock:  # the quota counted and the run queued as one step
            if token is not None:
                self._check_quota(token)
            self.store.create_run(record)
            self.db.enqueue(record.id, {}, token.id if token else "")
        self.queue.submit(record.id)
        return self.store.get_run(record.id), list(plan.notes)

    def cancel(self, run_id: str, token: TokenInfo | None = None) -> str:
        run = self.store.get_run(run_id)
        self._check_owner(run.id, token, "cancel")
        outcome = self.queue.cancel(run.id)
        if outcome == "idle":
            raise Conflict(
                f"run {run.id} is {run_status(run)}, not queued or running in this hub; "
                "nothing to cancel"
            )
        return outcome

    def resume(
        self, run_id: str, options: Mapping[str, Any], token: TokenInfo | None = None
    ) -> RunRecord:
        run = self.store.get_run(run_id)
        self._check_owner(run.id, token, "resume")
        status = run_status(run)
        if status in ("queued", "running") or run.id in self.queue.running():
            raise Conflict(f"run {run.id} is already {status}; wait for it or cancel it")
        kept = {k: v for k, v in options.items() if v is not None}
        plan = plan_resume(
            self.store, run.id, names=API_NAMES, **kept
        )  # every check now, before it is queued
        self.policy.check_plan(plan)
        item = self.db.item(run.id)
        owner = item.token_id if item and item.token_id else (token.id if token else "")
        with self._queue_lock:
            if token is not None:
                self._check_quota(token)
            self.store.update_run(run.id, status="queued", error="")
            self.db.enqueue(run.id, kept, owner)
        self.queue.submit(run.id)
        return self.store.get_run(run.id)

    # -- who may -----------------------------------------------------------------------------
    def _check_owner(self, run_id: str, token: TokenInfo | None, verb: str) -> None:
        """A ``launch`` token may cancel and resume the runs it queued; ``admin`` any run."""
        if token is None or token.allows("admin"):
            return
        item = self.db.item(run_id)
        if item is None or item.token_id != token.id:
            raise Forbidden(
                f"run {run_id} was not queued by token {token.name!r}; only an admin token "
                f"may {verb} it (galapagos token create NAME --scope admin)"
            )

    def _check_quota(self, token: TokenInfo) -> None:
        held = self.db.in_queue(token.id)
        if held >= self.settings.max_queued_per_token:
            raise OverQuota(
                f"token {token.name!r} has {held} runs queued or running, its quota; wait for "
                "one to end or cancel one",
                QUEUE_RETRY_S,
            )
