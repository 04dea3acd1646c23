"""Conformance of the runs' leases (``RunLeases``, ``store.leases``): a run is claimed by one
live owner, its heartbeat says whether the owner still holds it, and a fenced writer that lost
the run writes nothing more to it.  (tests/store/test_liveness.py covers owners on other hosts
and whole runs.)"""

from __future__ import annotations

import time
from typing import Any

import pytest

from harness.core.errors import RunNotFound, StoreError
from harness.store.owner import owner_token
from tests.store.conftest import commit, program, run_record

#: An owner on another host that beat just now: alive, judged by its heartbeat.
OTHER = "other-host-boot:7:7"


def test_a_claim_takes_a_stopped_run_and_refuses_a_live_one(writer: Any) -> None:
    writer.create_run(run_record(status="interrupted", error="x", stop_reason="stopped"))
    me = owner_token()
    assert writer.leases.claim_run("r1", me) == ""
    run = writer.get_run("r1")
    assert (run.status, run.owner, run.error, run.stop_reason) == ("running", me, "", "")
    assert run.heartbeat_at is not None and time.time() - run.heartbeat_at < 5
    assert writer.leases.claim_run("r1", me) == ""  # its own run again
    writer.update_run("r1", owner=OTHER, heartbeat_at=time.time())
    assert writer.leases.claim_run("r1", me) == OTHER
    assert writer.get_run("r1").owner == OTHER
    with pytest.raises(RunNotFound):
        writer.leases.claim_run("nope", me)


def test_a_beat_tells_the_owner_whether_it_still_holds_the_run(writer: Any) -> None:
    writer.create_run(run_record(owner="a:1:1", heartbeat_at=1.0))
    assert writer.leases.beat("r1", "a:1:1")
    assert writer.get_run("r1").heartbeat_at > 1.0
    writer.update_run("r1", owner="b:2:2")
    assert not writer.leases.beat("r1", "a:1:1")


def test_a_fenced_writer_that_lost_its_run_writes_nothing_more(writer: Any) -> None:
    writer.create_run(run_record(owner="a:1:1"))
    writer.leases.fence("r1", "a:1:1")
    writer.commit_iteration(commit("r1", 0, [program("p0", 0, 0.5)]))
    writer.update_run("r1", iterations_done=0)
    # Another process took the run over (as a claim after this one stopped beating does).
    writer.leases.fence("r1", None)
    writer.update_run("r1", owner=OTHER)
    writer.leases.fence("r1", "a:1:1")
    with pytest.raises(StoreError, match="taken over by another process"):
        writer.commit_iteration(commit("r1", 1, [program("p1", 1, 0.6)], iterations_done=1))
    with pytest.raises(StoreError, match="taken over by another process"):
        writer.update_run("r1", status="completed")
    run = writer.get_run("r1")
    assert (run.owner, run.status, run.iterations_done) == (OTHER, "running", 0)
    assert [p.id for p in writer.programs("r1")] == ["p0"]
    writer.leases.fence("r1", None)  # lifted: writes go through again
    writer.update_run("r1", status="completed")
    assert writer.get_run("r1").status == "completed"
