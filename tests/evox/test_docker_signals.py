"""`galapagos strategy validate` and `galapagos run` remove their containers on SIGTERM as on
SIGINT (issue 20): the real command in a subprocess, stopped while its containers exist.

The containers are found by this subprocess's owner label; after it exits none may be left —
removed by the command itself, not by a later reaper.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import docker
import pytest

from harness.sandbox import ownership
from tests.cli.helpers import ROOT
from tests.evox.strategies import module

pytestmark = [pytest.mark.docker, pytest.mark.slow]

#: Passes the pre-filter's absence only (imports time); each add() takes a while, so the
#: validation is still running when the signal arrives.
SLOW = module(imports="import time", add="time.sleep(0.3)")
EXIT = {signal.SIGTERM: 143, signal.SIGINT: 130}


def containers_of(owner: str) -> list[tuple[str, str]]:
    """(name, role) of every container labelled with ``owner``."""
    client = docker.from_env()
    try:
        found = client.containers.list(
            all=True,
            ignore_removed=True,
            filters={"label": f"{ownership.OWNER_LABEL}={owner}"},
        )
        return [(c.name, c.labels.get(ownership.ROLE_LABEL, "")) for c in found]
    finally:
        client.close()


def start(*args: str, store: Path | None = None) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "GALAPAGOS_"))}
    if store is not None:
        env["GALAPAGOS_STORE"] = str(store)
    return subprocess.Popen(
        [sys.executable, "-m", "harness.cli", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_roles(proc: subprocess.Popen[str], owner: str, roles: set[str]) -> None:
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(f"the command ended before it was stopped: {err[-2000:]}")
        if roles <= {role for _, role in containers_of(owner)}:
            return
        time.sleep(0.2)
    proc.kill()
    raise AssertionError(f"no containers with roles {roles} appeared")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_strategy_validate_removes_its_sandbox_when_stopped(
    sig: signal.Signals, tmp_path: Path
) -> None:
    path = tmp_path / "slow.py"
    path.write_text(SLOW)
    proc = start("strategy", "validate", str(path), "--sandbox", "docker", "--no-prefilter")
    owner = ownership.owner_id(proc.pid)
    wait_for_roles(proc, owner, {"strategy"})
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == EXIT[sig], err[-2000:]
    assert containers_of(owner) == []


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_an_evox_run_removes_its_containers_when_stopped(
    sig: signal.Signals, tmp_path: Path
) -> None:
    proc = start(
        "run", "-s", "evox", "-t", "function_minimization", "-i", "200", "--sandbox", "docker",
        "--seed", "5", "--json", store=tmp_path / "store.sqlite",
    )  # fmt: skip
    owner = ownership.owner_id(proc.pid)
    wait_for_roles(proc, owner, {"strategy", "eval"})  # mid-run: both kinds are up
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 130, err[-2000:]  # interrupted, as Ctrl-C
    assert '"status": "interrupted"' in out
    assert containers_of(owner) == []
