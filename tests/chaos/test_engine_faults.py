"""Surviving the engine (real dockerd, stopped and started by the test): infrastructure faults
are waited out and retried on fresh containers, never charged to a candidate.

- an engine restart in the middle of a run: the run completes with every iteration's result
  equal to the same seeded run without the restart, no evaluation recorded as a crash, and
  nothing left behind;
- a container killed or removed from outside during an evaluation: retried, same result;
- the same restart under parallel iterations: one wait, announced once, and nothing charged;
- an engine that stays down past the run's deadline: exit 1 with a one-line reason, the JSON
  summary, and ``resume`` completes the run identically.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import docker
import pytest

from harness.evaluation.driver import TaskEvaluator
from harness.evaluation.task import load_task
from harness.sandbox.docker_backend import DockerBackend
from harness.store.sqlite import SQLiteStore
from tests.chaos.engine import engine_down, engine_up, outage, restored_engine
from tests.cli.helpers import ROOT, galapagos

pytestmark = [pytest.mark.docker, pytest.mark.slow]

RUN = ["run", "-s", "best_of_n", "-t", "circle_packing", "--seed", "5"]


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "GALAPAGOS_"))}


def start(store: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "harness.cli", *RUN, *args, "--json", "--store", str(store)],
        cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def done(store: Path) -> int:
    if not store.exists():
        return 0
    opened = SQLiteStore(store)
    try:
        runs = opened.list_runs()
        return runs[0].iterations_done if runs else 0
    finally:
        opened.close()


def wait_for(store: Path, proc: subprocess.Popen[str], iterations: int) -> None:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None and done(store) < iterations:
        time.sleep(0.1)
    assert proc.poll() is None, "the run ended before the fault could be injected"


def results(store: Path, run_id: str) -> list[tuple[Any, ...]]:
    opened = SQLiteStore(store)
    try:
        programs = [(p.id, p.parent_id, p.code, p.score) for p in opened.programs(run_id)]
        statuses = [e["status"] for e in opened.evaluations(run_id)]
    finally:
        opened.close()
    return [*programs, tuple(statuses)]


def statuses(store: Path, run_id: str) -> list[str]:
    opened = SQLiteStore(store)
    try:
        return [e["status"] for e in opened.evaluations(run_id)]
    finally:
        opened.close()


def containers_of(run_id: str) -> list[str]:
    client = docker.from_env()
    return [
        c.name
        for c in client.containers.list(all=True, filters={"label": f"galapagos.run={run_id}"})
    ]


@pytest.fixture(scope="module")
def undisturbed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    store = tmp_path_factory.mktemp("calm") / "s.sqlite"
    proc = galapagos(*RUN, "-i", "10", "--json", "--store", str(store), timeout=600)
    assert proc.returncode == 0, proc.stderr
    return store, json.loads(proc.stdout)


def test_a_run_survives_an_engine_restart_unchanged(
    tmp_path: Path, undisturbed: tuple[Path, dict[str, Any]]
) -> None:
    calm_store, calm = undisturbed
    store = tmp_path / "s.sqlite"
    with restored_engine():
        proc = start(store, "-i", "10")
        wait_for(store, proc, 3)
        outage(2.0)
        out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    summary = json.loads(out)
    assert summary["status"] == "completed" and summary["iterations_failed"] == 0, err
    assert results(store, summary["run_id"]) == results(calm_store, calm["run_id"])
    assert "crash" not in statuses(store, summary["run_id"])
    assert "waiting up to" in err and "is back after" in err  # the wait was visible
    opened = SQLiteStore(store)
    retried = opened.events(summary["run_id"], ["infrastructure_retry"])
    opened.close()
    assert retried, "the restart was not met by any evaluation"
    assert containers_of(summary["run_id"]) == []


@pytest.mark.parametrize(
    ("disturb", "fault"),
    [
        ("kill", ("stopped from outside during the job (exit code 137)",)),
        # A forced removal kills first: the state read may still find the exit, or no
        # container at all.
        ("remove", ("stopped from outside during the job", "vanished during the job")),
    ],
    ids=["kill", "remove"],
)
def test_a_container_killed_from_outside_is_retried_with_the_same_result(
    disturb: str, fault: tuple[str, ...]
) -> None:
    task = load_task("circle_packing")
    backend = DockerBackend(pool_size=0)
    evaluator = TaskEvaluator(task, backend, run_id="chaos-kill")
    code = task.initial_program or ""
    slow = code.replace(
        "def run_packing():", "def run_packing():\n    import time\n    time.sleep(5)"
    )
    assert slow != code
    client = docker.from_env()
    killed: list[str] = []

    def killer() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not killed:
            for c in client.containers.list(filters={"label": "galapagos.program=victim"}):
                time.sleep(2.5)  # the job is delivered and running (its runner ready, even loaded)
                c.kill() if disturb == "kill" else c.remove(force=True)
                killed.append(c.name)
                return
            time.sleep(0.05)

    async def go() -> Any:
        try:
            calm = await evaluator.evaluate(slow, program_id="calm", iteration=1)
            thread = threading.Thread(target=killer)
            thread.start()
            hit = await evaluator.evaluate(slow, program_id="victim", iteration=1)
            thread.join()
            return calm, hit
        finally:
            await evaluator.aclose()

    calm, hit = asyncio.run(go())
    assert killed, "no container was killed"
    assert calm.status == "ok" and hit.status == "ok"
    assert hit.metrics == calm.metrics
    assert len(hit.infra_retries) == 1
    assert any(text in hit.infra_retries[0] for text in fault), hit.infra_retries


def test_parallel_iterations_share_one_wait_for_a_restarted_engine(tmp_path: Path) -> None:
    """Several evaluations meet the same restart: the run waits once (one message pair),
    cleans up once, and every evaluation is the candidate's own result."""
    store = tmp_path / "s.sqlite"
    with restored_engine():
        proc = start(store, "-i", "12", "--set", "general.max_parallel_iterations=3")
        wait_for(store, proc, 3)
        outage(2.0)
        out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    summary = json.loads(out)
    assert summary["status"] == "completed" and summary["iterations_failed"] == 0, err
    assert set(statuses(store, summary["run_id"])) == {"ok"}, err
    assert err.count("waiting up to") == 1 and err.count("is back after") == 1, err
    assert "could not remove container" not in err, err
    opened = SQLiteStore(store)
    retried = opened.events(summary["run_id"], ["infrastructure_retry"])
    opened.close()
    faults = [f for e in retried for f in e.payload["faults"]]
    assert any("the engine was back after" in f for f in faults), faults
    assert containers_of(summary["run_id"]) == []


def test_an_engine_down_past_the_deadline_stops_the_run_and_resume_completes_it(
    tmp_path: Path, undisturbed: tuple[Path, dict[str, Any]]
) -> None:
    calm_store, calm = undisturbed
    store = tmp_path / "s.sqlite"
    with restored_engine():
        proc = start(store, "-i", "10", "--set", "evaluator.engine_wait_s=3")
        wait_for(store, proc, 3)
        engine_down()
        out, err = proc.communicate(timeout=300)
        engine_up()
    assert proc.returncode == 1, err
    summary = json.loads(out)  # the JSON summary is printed all the same
    assert summary["status"] == "interrupted" and summary["iterations_done"] < 10
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1
    assert "stayed unreachable for 3 s" in errors[0]
    assert f"galapagos resume {summary['run_id']}" in errors[0]
    resumed = galapagos("resume", summary["run_id"], "--json", "--store", str(store), timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["status"] == "completed"
    assert results(store, summary["run_id"]) == results(calm_store, calm["run_id"])
    assert containers_of(summary["run_id"]) == []


async def test_an_engine_restart_during_a_strategy_deployment_is_no_strategy_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine goes down while EvoX deploys a rewritten strategy (its container starting
    and being fed the population): the strategy restarts and replays, the switch happens, no
    fallback, no failure recorded against it."""
    from scaffolds.evox.evolver import StrategyEvolver
    from tests.evox.e2e import run_evox, switch_log

    real_deploy = StrategyEvolver._deploy
    outages: list[threading.Thread] = []

    async def deploy_during_an_outage(self, sid, source, job, attempt, emit):  # type: ignore[no-untyped-def]
        if not outages:  # the first deployment meets an engine restart
            thread = threading.Thread(target=outage, args=(2.0,))
            outages.append(thread)
            thread.start()
            await asyncio.sleep(0.3)  # the engine is going down as the container starts
        try:
            return await real_deploy(self, sid, source, job, attempt, emit)
        finally:
            for thread in outages:
                await asyncio.to_thread(thread.join)

    monkeypatch.setattr(StrategyEvolver, "_deploy", deploy_during_an_outage)
    with restored_engine():
        summary, store, scaffold = await run_evox(
            tmp_path / "store.sqlite",
            task="circle_packing",
            iterations=14,
            seed=0,
            faults="{}",
            run_id="chaos-evox",
            overrides=["memory.switch_interval=3", "memory.improvement_threshold=100"],
        )
    log = "\n".join(switch_log(store, "chaos-evox"))
    assert outages, "no deployment happened"
    assert summary.status == "completed" and summary.iterations_done == 14, log
    assert store.events("chaos-evox", ["strategy_switch"]), log
    assert store.events("chaos-evox", ["strategy_failure"]) == [], log
    assert store.events("chaos-evox", ["strategy_restore"]) == [], log
    retries = store.events("chaos-evox", ["strategy_infrastructure_retry"])
    assert retries, log
    assert containers_of("chaos-evox") == []


def test_an_engine_down_past_the_deadline_halts_a_benchmark_and_the_command_continues_it(
    tmp_path: Path,
) -> None:
    """The first cell stopped by the outage halts the benchmark: the queued cells are not
    started into the same outage (each would wait out the deadline and end interrupted)."""
    store = tmp_path / "s.sqlite"
    bench = ["bench", "--name", "outage", "--scaffolds", "best_of_n", "--tasks",
             "circle_packing", "--seeds", "3", "--iterations", "6", "--parallel", "1",
             "--set", "evaluator.engine_wait_s=3", "--json", "--store", str(store)]  # fmt: skip
    with restored_engine():
        proc = subprocess.Popen(
            [sys.executable, "-m", "harness.cli", *bench],
            cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            if done(store) >= 2:  # the first cell's run (the only one so far)
                break
            time.sleep(0.1)
        assert proc.poll() is None, "the benchmark ended before the fault could be injected"
        engine_down()
        out, err = proc.communicate(timeout=300)
        engine_up()
    assert proc.returncode == 1, err
    summary = json.loads(out)
    assert "stayed unreachable for 3 s" in summary["halted"]
    assert summary["interrupted"] is True
    assert summary["status"] == {"interrupted": 1, "queued": 2}, summary["status"]
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "continue with the same galapagos bench command" in errors[0]
    opened = SQLiteStore(store)
    try:
        assert len(opened.list_runs()) == 1  # the queued cells never started
    finally:
        opened.close()

    again = galapagos(*bench, timeout=600)
    assert again.returncode == 0, again.stderr
    cells = json.loads(again.stdout)["cells"]
    assert [(c["status"], c["iterations_done"]) for c in cells] == [("completed", 6)] * 3
    assert all(containers_of(c["run_id"]) == [] for c in cells)
