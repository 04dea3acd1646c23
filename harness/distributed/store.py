"""Commits from worker nodes to the head's store: a store actor on the head, a proxy on nodes.

The design choice: **streamed commits to the head**, not a server database.  The head keeps the
one embedded SQLite store (WAL) as on a single machine; a :class:`StoreActor` on the head node
owns a connection to it, and a run executing on a node writes through :class:`RemoteStore`,
which sends each store call to that actor and waits for its answer.  So a commit is durable in
the head's store before the node's run goes on (one transaction per iteration, as locally: a
node lost mid-run loses at most its iteration in flight, and the run resumes elsewhere from its
last commit), and everything reading the head's store (the CLI, the hub, the leaderboard) sees
every node's runs as it sees local ones.  The price is one round trip per store call (≈2 ms on
a loopback cluster, see docs/scale-out.md); the head's store stays the single writer's limit.

Writes carry their owner: the actor fences each write to the run's current owner, as the local
store does (:meth:`harness.store.leases.SQLiteLeases.fence`), so a node that lost its run to
another one cannot overwrite it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.core.records import Event, Program
from harness.core.store import IterationCommit, RunRecord
from harness.store.sqlite import SQLiteStore

__all__ = ["RemoteStore", "StoreActor", "start_store_actor"]

#: The store calls a run makes (the controller's writer seam, its leases, resume reads).
WRITES = frozenset({"create_run", "update_run", "commit_iteration"})
LEASES = frozenset({"claim_run", "beat"})
READS = frozenset(
    {
        "get_run",
        "programs",
        "checkpoint",
        "done_iterations",
        "events",
        "evaluation_count",
        "program_count",
        "llm_calls",
    }
)


class StoreActor:
    """The head's store, served to the nodes (one connection, calls one at a time)."""

    def __init__(self, path: str) -> None:
        self.store = SQLiteStore(Path(path))
        self.calls = 0

    def call(self, method: str, args: tuple[Any, ...], kwargs: dict[str, Any], owner: Any) -> Any:
        if method not in WRITES | LEASES | READS:
            raise AttributeError(f"the head's store does not serve {method!r}")
        self.calls += 1
        run_id = _run_id(method, args, kwargs)
        if owner is not None and run_id is not None and method in WRITES | LEASES:
            self.store.leases.fence(run_id, owner)
        try:
            target = self.store.leases if method in LEASES else self.store
            return getattr(target, method)(*args, **kwargs)
        finally:
            if run_id is not None:
                self.store.leases.fence(run_id, None)


def _run_id(method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    if method == "commit_iteration":
        return str(args[0].run_id)
    if method == "create_run":
        return None
    first = args[0] if args else kwargs.get("run_id")
    return first if isinstance(first, str) else None


class RemoteStore:
    """The run store on a worker node (a :class:`~harness.store.protocols.LeasedRunStore`):
    each call is a round trip to the head's store actor.  Blocking, as the local store's calls
    are (the controller commits synchronously)."""

    def __init__(self, actor: Any) -> None:
        import ray

        self._ray = ray
        self._actor = actor
        self._fences: dict[str, str] = {}
        #: The run's claim and heartbeat on the head; its fence travels with each write.
        self.leases = RemoteLeases(self)

    def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """``method`` on the head's store, with this node's fence for the run it writes."""
        run_id = _run_id(method, args, kwargs)
        owner = self._fences.get(run_id) if run_id is not None else None
        ref = self._actor.call.remote(method, args, kwargs, owner)
        try:
            return self._ray.get(ref)
        except self._ray.exceptions.RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            if isinstance(cause, Exception):
                raise cause from None
            raise

    def create_run(self, run: RunRecord) -> None:
        self.call("create_run", run)

    def get_run(self, run_id: str) -> RunRecord:
        run: RunRecord = self.call("get_run", run_id)
        return run

    def update_run(self, run_id: str, **fields: Any) -> None:
        self.call("update_run", run_id, **fields)

    def commit_iteration(self, commit: IterationCommit) -> None:
        self.call("commit_iteration", commit)

    def programs(self, run_id: str) -> list[Program]:
        programs: list[Program] = self.call("programs", run_id)
        return programs

    def checkpoint(self, run_id: str) -> tuple[int, Mapping[str, Any]] | None:
        found: tuple[int, Mapping[str, Any]] | None = self.call("checkpoint", run_id)
        return found

    def done_iterations(self, run_id: str) -> set[int]:
        done: set[int] = self.call("done_iterations", run_id)
        return done

    def events(self, run_id: str, kinds: Sequence[str] | None = None) -> list[Event]:
        events: list[Event] = self.call("events", run_id, kinds)
        return events


class RemoteLeases:
    """A :class:`~harness.store.protocols.RunLeases` on the head's store: claims and beats
    are round trips; the fence is kept here and sent with each write (the actor applies it)."""

    def __init__(self, store: RemoteStore) -> None:
        self._store = store

    def claim_run(self, run_id: str, owner: str) -> str:
        holder: str = self._store.call("claim_run", run_id, owner)
        return holder

    def beat(self, run_id: str, owner: str) -> bool:
        alive: bool = self._store.call("beat", run_id, owner)
        return alive

    def fence(self, run_id: str, owner: str | None) -> None:
        if owner is None:
            self._store._fences.pop(run_id, None)
        else:
            self._store._fences[run_id] = owner


def start_store_actor(path: Path) -> Any:
    """The store actor for ``path``, on this (the head's) node."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    here = ray.get_runtime_context().get_node_id()
    return (
        ray.remote(StoreActor)
        .options(
            num_cpus=0,
            scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False),
        )
        .remote(str(path))
    )
