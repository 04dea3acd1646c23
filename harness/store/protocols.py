"""The store as its users see it: one narrow protocol per kind of user.

- ``RunStore`` (:mod:`harness.core.store`): the controller writes a run and reads it back to
  resume it.  SQLiteStore; on a Ray node, RemoteStore.
- :class:`RunLeases` (``store.leases``): whoever executes a run claims it, beats, and fences
  its writes to the owner.  SQLiteLeases; RemoteLeases.
- :class:`LeasedRunStore`: what :func:`harness.runs.execute` needs, a ``RunStore`` with its
  leases.  SQLiteStore, RemoteStore.
- :class:`RunReader`: what the CLI, the hub's pages, export, reports and the leaderboard read
  of runs (programs, events, evaluations, LLM calls).  SQLiteReader, SQLiteStore.
- :class:`BenchmarkReader` (``store.benchmarks``): benchmark matrices and cells, for the
  leaderboard and the hub; :class:`BenchmarkStore` adds what the benchmark runner writes.
  SQLiteBenchmarks.
- :class:`StoreReader`: a reader of a whole store file, its runs, ``.benchmarks`` and
  ``path``.  SQLiteReader, SQLiteStore.

The hub's tokens, sessions and queue are the hub's own repository
(:class:`harness.service._db.ServiceDB`) over tables this package migrates
(:mod:`harness.store.schema`).  Components never see a store (only the controller writes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from harness.core.records import Event, Program
from harness.core.store import RunRecord, RunStore

__all__ = [
    "BenchmarkCell",
    "BenchmarkReader",
    "BenchmarkStore",
    "LeasedRunStore",
    "RunLeases",
    "RunReader",
    "StoreReader",
    "StoredEvent",
]


@dataclass(frozen=True)
class StoredEvent:
    """An event as stored: with its sequence number within the run and its time."""

    seq: int
    iteration: int | None
    kind: str
    payload: Mapping[str, Any]
    created_at: float | None


@dataclass(frozen=True)
class BenchmarkCell:
    """One scaffold × task × seed cell of a benchmark: its run (``None`` until one was
    created), or why none could start."""

    benchmark: str
    scaffold: str
    task: str
    seed: int
    position: int
    run_id: str | None = None
    error: str = ""


class RunLeases(Protocol):
    """Who runs a run: an atomic claim, the owner's heartbeat, and a write fence.

    A run is claimed by an owner token (``harness.store.owner.owner_token``) before it
    executes; its owner beats every few seconds; and a store connection fenced to the owner
    refuses that run's writes once another owner holds it.  So a run is never executed by two
    processes, on one host or two (a Ray node that went silent and came back included)."""

    def claim_run(self, run_id: str, owner: str) -> str:
        """Make ``owner`` the process running ``run_id`` (status ``running``, a fresh beat),
        atomically; returns the live owner holding it instead ('' when claimed)."""
        ...

    def beat(self, run_id: str, owner: str) -> bool:
        """The owner's heartbeat; False when ``owner`` no longer holds the run."""
        ...

    def fence(self, run_id: str, owner: str | None) -> None:
        """Write run ``run_id`` only while ``owner`` holds it (``None`` lifts the fence)."""
        ...


class LeasedRunStore(RunStore, Protocol):
    """What executing a run needs: the controller's writer and the run's leases."""

    @property
    def leases(self) -> RunLeases: ...


class RunReader(Protocol):
    """The read side of the runs: what listings, pages, exports and reports show.

    Reads never block the writer (WAL); they see every committed iteration, never half of one.
    Unknown run ids raise :class:`~harness.core.errors.RunNotFound` from :meth:`get_run`;
    the per-run queries of an unknown run return empty results."""

    def get_run(self, run_id: str) -> RunRecord:
        """The run ``run_id`` names (a unique prefix of an id is enough)."""
        ...

    def list_runs(self, limit: int | None = None) -> list[RunRecord]:
        """Runs, newest first."""
        ...

    def programs(self, run_id: str) -> list[Program]:
        """Every program of the run, in the order they were admitted."""
        ...

    def program(self, run_id: str, program_id: str) -> Program | None: ...

    def program_count(self, run_id: str) -> int: ...

    def children(self, run_id: str, program_id: str) -> list[Program]: ...

    def events(self, run_id: str, kinds: Sequence[str] | None = None) -> list[Event]: ...

    def events_after(
        self, run_id: str, after_seq: int = -1, *, limit: int | None = None
    ) -> list[StoredEvent]:
        """Events numbered above ``after_seq``, in order (a live feed reads on from there)."""
        ...

    def last_seq(self, run_id: str) -> int:
        """The newest event's sequence number (-1: none yet)."""
        ...

    def evaluations(self, run_id: str) -> list[dict[str, Any]]: ...

    def evaluation_count(self, run_id: str) -> int: ...

    def program_evaluations(self, run_id: str, program_id: str) -> list[dict[str, Any]]: ...

    def score_history(self, run_id: str) -> list[tuple[int, float | None]]:
        """(iteration, best score after it) for every committed iteration, in order."""
        ...

    def llm_calls(self, run_id: str) -> list[dict[str, Any]]: ...

    def llm_exchanges(self, run_id: str, iteration: int | None = None) -> list[dict[str, Any]]:
        """LLM calls with their prompt and response text (all, or one iteration's)."""
        ...

    def llm_usage(self, run_id: str) -> dict[str, Any]:
        """Calls, tokens, cost and latency in all, by model and by purpose."""
        ...

    def best_by_task(self) -> dict[str, tuple[float, dict[str, Any]]]:
        """For each task, the best score any stored run reached and that program's metrics."""
        ...


class BenchmarkReader(Protocol):
    """The benchmark tables, read: each benchmark's matrix and its cells' runs."""

    def benchmark(self, name: str) -> dict[str, Any] | None:
        """The stored matrix of benchmark ``name`` (None: no such benchmark)."""
        ...

    def benchmarks(self) -> list[tuple[str, dict[str, Any], float]]:
        """Every benchmark: (name, matrix, created_at), newest first."""
        ...

    def benchmark_cells(self, name: str) -> list[BenchmarkCell]: ...

    def benchmark_run_ids(self) -> set[str]:
        """Every run that fills a cell of some benchmark."""
        ...

    def run_benchmarks(self, run_id: str) -> list[str]:
        """The benchmarks a run fills a cell of."""
        ...


class BenchmarkStore(BenchmarkReader, Protocol):
    """The benchmark tables, written by the benchmark runner (one process per benchmark)."""

    def create_benchmark(
        self, name: str, matrix: Mapping[str, Any], cells: Sequence[BenchmarkCell]
    ) -> None: ...

    def claim_benchmark(self, name: str, owner: str) -> str:
        """Make ``owner`` the process running benchmark ``name``; returns the live owner that
        holds it instead ('' when the claim succeeded)."""
        ...

    def release_benchmark(self, name: str, owner: str) -> None: ...

    def set_cell(
        self, name: str, scaffold: str, task: str, seed: int, *, run_id: str | None, error: str = ""
    ) -> None:
        """Record the run that fills a cell (or why none could start)."""
        ...


class StoreReader(RunReader, Protocol):
    """A reader of a whole store file: its runs, and its benchmarks."""

    @property
    def path(self) -> Path:
        """The store file (messages name it)."""
        ...

    @property
    def benchmarks(self) -> BenchmarkReader: ...
