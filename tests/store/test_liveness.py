"""Runs carry a heartbeat and a structured stop reason; a live run is never resumed twice."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
from pathlib import Path

import pytest

from harness.core.errors import ConfigError, StoreError
from harness.core.store import RunRecord
from harness.runs import execute, plan_resume, plan_run, run_status
from harness.store import owner as liveness
from harness.store.owner import STALE_S, owner_token
from harness.store.sqlite import SQLiteStore

#: An owner on another host: its boot id is not ours, so only its heartbeat says it lives.
REMOTE = "another-host-boot:4242:1234"


def _run(store: SQLiteStore, run_id: str, **fields: object) -> RunRecord:
    run = RunRecord(
        id=run_id,
        scaffold="topk",
        task="circle_packing",
        task_path="",
        config={},
        seed=0,
        max_iterations=3,
    )
    store.create_run(dataclasses.replace(run, **fields))  # type: ignore[arg-type]
    return store.get_run(run_id)


def test_a_remote_owner_is_alive_while_it_beats_and_interrupted_once_it_stops(
    tmp_path: Path,
) -> None:
    store = SQLiteStore(tmp_path / "s.sqlite")
    fresh = _run(store, "fresh", owner=REMOTE, heartbeat_at=time.time())
    stale = _run(store, "stale", owner=REMOTE, heartbeat_at=time.time() - STALE_S - 1)
    never = _run(store, "never", owner=REMOTE)
    assert run_status(fresh) == "running"
    assert run_status(stale) == "interrupted"
    assert run_status(never) == "interrupted"
    # A live run elsewhere is refused, whoever asks, and the claim says who holds it.
    assert store.leases.claim_run("fresh", owner_token()) == REMOTE
    assert store.get_run("fresh").owner == REMOTE
    # A dead one is taken over; its old owner's next beat learns it lost the run.
    assert store.leases.claim_run("stale", owner_token()) == ""
    taken = store.get_run("stale")
    assert (taken.status, taken.owner) == ("running", owner_token())
    assert taken.heartbeat_at is not None and time.time() - taken.heartbeat_at < 5
    assert not store.leases.beat("stale", REMOTE)
    assert store.leases.beat("stale", owner_token())


def test_a_local_owner_is_judged_by_its_process_not_its_heartbeat(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.sqlite")
    mine = _run(store, "mine", owner=owner_token(), heartbeat_at=0.0)  # no beat, but alive
    assert run_status(mine) == "running"
    boot = owner_token().split(":")[0]
    dead = _run(store, "dead", owner=f"{boot}:999999:1", heartbeat_at=time.time())
    assert run_status(dead) == "interrupted"


def test_two_claims_at_once_have_exactly_one_winner(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    _run(SQLiteStore(path), "r", owner=REMOTE, heartbeat_at=0.0)
    stores = [SQLiteStore(path) for _ in range(8)]
    claimants = [f"{REMOTE}-{i}" for i in range(8)]  # eight "hosts" resuming one run
    results: list[str] = [""] * 8
    start = threading.Barrier(8)

    def claim(i: int) -> None:
        start.wait()
        # Every claimant is "remote", so each sees the others' claims as live (fresh beat).
        results[i] = stores[i].leases.claim_run("r", claimants[i])

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [c for c, held in zip(claimants, results, strict=True) if held == ""]
    assert len(winners) == 1
    assert stores[0].get_run("r").owner == winners[0]
    assert {held for held in results if held} == {winners[0]}


@pytest.mark.slow  # a few runs in host subprocesses (the local sandbox)
async def test_a_run_ends_with_a_structured_stop_reason(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.sqlite")
    plan = plan_run(scaffold="topk", task="circle_packing", iterations=2, sandbox="local")
    done = await execute(plan, store)
    assert (done.status, done.stop_reason) == ("completed", "completed")
    assert store.get_run(done.run_id).stop_reason == "completed"

    stop = asyncio.Event()
    stop.set()
    stopped = await execute(plan, store, stop=stop)
    assert (stopped.status, stopped.stop_reason) == ("interrupted", "stopped")
    assert store.get_run(stopped.run_id).stop_reason == "stopped"

    poor = plan_run(
        scaffold="topk",
        task="circle_packing",
        iterations=3,
        sandbox="local",
        overrides=["llm.max_total_tokens=1"],
    )
    spent = await execute(poor, store)
    assert (spent.status, spent.stop_reason) == ("budget_exhausted", "budget")
    # Resuming clears the reason while the run runs again.
    assert store.leases.claim_run(stopped.run_id, owner_token()) == ""
    assert store.get_run(stopped.run_id).stop_reason == ""


@pytest.mark.slow  # a few runs in host subprocesses (the local sandbox)
async def test_an_owner_whose_run_was_taken_over_stops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("harness.runs.HEARTBEAT_S", 0.05)
    store = SQLiteStore(tmp_path / "s.sqlite")
    plan = plan_run(scaffold="topk", task="circle_packing", iterations=40, sandbox="local")
    beats: list[float] = []

    def on_progress(p: object) -> None:
        run = store.get_run(store.list_runs()[0].id)
        beats.append(run.heartbeat_at or 0.0)
        if len(beats) == 3:  # another host claims the run (as if this one had gone silent)
            store.update_run(run.id, owner=REMOTE, heartbeat_at=time.time())

    # Whichever comes first stops it: its heartbeat learns it lost the run, or its next commit
    # is refused by the fence.  Either way it writes nothing more to the run.
    try:
        summary = await execute(plan, store, on_progress=on_progress)
        assert summary.stop_reason == "owner_lost"
    except StoreError as exc:
        assert "taken over by another process" in str(exc)
    run = store.list_runs()[0]
    assert beats[1] >= beats[0]
    assert (run.status, run.owner, run.stop_reason) == ("running", REMOTE, "")
    assert run.iterations_done == 2  # committed before the takeover, nothing after
    assert liveness.run_alive(run)  # the new owner's, untouched
    with pytest.raises(ConfigError, match="still running"):
        plan_resume(store, run.id)


@pytest.mark.slow  # a few runs in host subprocesses (the local sandbox)
async def test_a_run_whose_remote_owner_stopped_beating_is_resumed_to_the_end(
    tmp_path: Path,
) -> None:
    store = SQLiteStore(tmp_path / "s.sqlite")
    plan = plan_run(scaffold="topk", task="circle_packing", iterations=3, sandbox="local")
    stop = asyncio.Event()
    first = await execute(plan, store, on_progress=lambda p: stop.set(), stop=stop)
    assert first.status == "interrupted"
    # As if a node had been running it and went silent / is still beating.
    store.update_run(first.run_id, status="running", owner=REMOTE, heartbeat_at=time.time())
    with pytest.raises(ConfigError, match="still running"):
        plan_resume(store, first.run_id)
    store.update_run(first.run_id, heartbeat_at=time.time() - STALE_S - 1)
    assert run_status(store.get_run(first.run_id)) == "interrupted"
    resumed = await execute(plan_resume(store, first.run_id), store)
    assert (resumed.status, resumed.iterations_done) == ("completed", 3)
    assert store.get_run(first.run_id).owner == owner_token()


def test_the_head_store_actor_fences_writes_to_the_runs_owner(tmp_path: Path) -> None:
    """The store nodes write through refuses a node that lost its run (no Ray needed here)."""
    from harness.distributed.store import StoreActor

    head = StoreActor(str(tmp_path / "s.sqlite"))
    _run(head.store, "r", owner="node-b:1:1", heartbeat_at=time.time())
    head.call("update_run", ("r",), {"iterations_done": 1}, "node-b:1:1")
    with pytest.raises(StoreError, match="taken over"):
        head.call("update_run", ("r",), {"iterations_done": 9}, "node-a:1:1")
    assert head.call("get_run", ("r",), {}, None).iterations_done == 1
    with pytest.raises(AttributeError):
        head.call("close", (), {}, None)  # only the run's calls are served
