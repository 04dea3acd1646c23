"""Implementations of the store's protocols, as fixtures, and builders of the records they
store.  The conformance suites (``test_writer``, ``test_reader``, ``test_benchmarks``,
``test_leases``) run every test against every implementation of their protocol (the optuna
``pytest_storages`` pattern): a new store passes them or it is not a store."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from harness.core.records import EvalResult, Event, LLMCall, Program
from harness.core.store import EvaluationRow, IterationCommit, LLMCallRow, RunRecord
from harness.distributed.store import RemoteStore, StoreActor
from harness.store import SQLiteReader, SQLiteStore


class _Now:
    """A resolved "object ref": what the in-process actor hands back."""

    def __init__(self, value: Any = None, error: BaseException | None = None) -> None:
        self.value, self.error = value, error


class _InProcessActor:
    """The head's :class:`StoreActor` called in this process: Ray's transport replaced by a
    direct call, so :class:`RemoteStore` and the actor's dispatch and fencing are exercised
    as on a cluster (tests/ray runs the same over a real one)."""

    def __init__(self, actor: StoreActor) -> None:
        def remote(*args: Any) -> _Now:
            try:
                return _Now(actor.call(*args))
            except Exception as exc:  # noqa: BLE001 - handed back as Ray hands back a task error
                return _Now(error=exc)

        self.call = SimpleNamespace(remote=remote)


def _get(ref: _Now) -> Any:
    if ref.error is not None:
        raise ref.error
    return ref.value


def remote_store(path: Path) -> RemoteStore:
    store = RemoteStore(_InProcessActor(StoreActor(str(path))))
    store._ray = SimpleNamespace(get=_get, exceptions=store._ray.exceptions)
    return store


#: Writers of runs (``RunStore`` + leases): the local file, and a Ray node's proxy to it.
WRITERS: dict[str, Callable[[Path], Any]] = {"sqlite": SQLiteStore, "remote": remote_store}


@pytest.fixture(params=sorted(WRITERS))
def writer(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """A ``LeasedRunStore`` over ``tmp_path/s.sqlite``."""
    yield WRITERS[request.param](tmp_path / "s.sqlite")


@pytest.fixture
def file_store(tmp_path: Path) -> Iterator[SQLiteStore]:
    store = SQLiteStore(tmp_path / "s.sqlite")
    yield store
    store.close()


@pytest.fixture(params=["writer", "read_only"])
def reader_of(request: pytest.FixtureRequest, file_store: SQLiteStore) -> Callable[[], Any]:
    """``reader_of()``: a ``StoreReader`` of ``file_store``'s file, opened after the data was
    written: the writer itself, or a read-only :class:`SQLiteReader`."""
    opened: list[SQLiteReader] = []

    def make() -> Any:
        if request.param == "writer":
            return file_store
        opened.append(SQLiteReader(file_store.path))
        return opened[-1]

    yield make
    for reader in opened:
        reader.close()


def run_record(run_id: str = "r1", **fields: Any) -> RunRecord:
    base: dict[str, Any] = dict(
        id=run_id,
        scaffold="topk",
        task="circle_packing",
        task_path="/tasks/circle_packing",
        config={"seed": 3, "llm": {"models": [{"name": "m"}]}},
        seed=3,
        max_iterations=5,
    )
    return RunRecord(**(base | fields))


def program(pid: str, iteration: int, score: float, parent: str | None = None) -> Program:
    return Program(
        id=pid,
        code=f"x = {score}\n",
        iteration=iteration,
        metrics={"combined_score": score, "valid": 1},
        score=score,
        parent_id=parent,
        inspiration_ids=("p0",) if parent else (),
        parent_label="explore" if parent else "",
        generation=iteration,
        changes=f"score {score}",
        artifacts={"stdout": "ok"},
        metadata={"island": iteration % 2},
    )


def commit(
    run_id: str,
    iteration: int,
    programs: list[Program] = (),
    *,
    kinds: tuple[str, ...] = ("select", "admit"),
    model: str = "m",
    purpose: str = "propose",
    best: float | None = None,
    checkpoint: dict[str, Any] | None = None,
    **run_updates: Any,
) -> IterationCommit:
    """One iteration's commit: its programs, one evaluation per program, one LLM call,
    events of ``kinds``."""
    return IterationCommit(
        run_id=run_id,
        iteration=iteration,
        status="ok" if programs else "failed",
        programs=list(programs),
        evaluations=[
            EvaluationRow(
                iteration,
                0,
                p.id,
                EvalResult("ok", metrics=dict(p.metrics), duration_s=0.5, stages=({"s": 1},)),
                p.code,
            )
            for p in programs
        ],
        llm_calls=[
            LLMCallRow(
                iteration,
                0,
                LLMCall(model, f"answer {iteration}", 10, 5, 0.25, 0.001, True, "", purpose),
                f"prompt {iteration}",
            )
        ],
        events=[Event(iteration, kind, {"i": iteration, "kind": kind}) for kind in kinds],
        checkpoint=checkpoint if checkpoint is not None else {"iteration": iteration},
        run_updates=dict(run_updates),
        best_score=best,
        duration_s=1.0,
    )
