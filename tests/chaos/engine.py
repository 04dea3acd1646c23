"""Stopping and starting the real Docker engine for chaos tests (never a mock).

``engine_down()`` stops dockerd with SIGTERM (as an operator or a package upgrade does) and
waits until it is gone; ``engine_up()`` starts it again with ``scripts/docker-engine.sh`` and
waits until it answers.  ``outage(seconds)`` does both around a pause, and always brings the
engine back, whatever happens in between.
"""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def engine_running() -> bool:
    return (
        subprocess.run(["docker", "info"], capture_output=True, timeout=30, check=False).returncode
        == 0
    )


def engine_down(timeout_s: float = 60.0) -> None:
    subprocess.run(["pkill", "-TERM", "-x", "dockerd"], check=False)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        alive = subprocess.run(["pgrep", "-x", "dockerd"], capture_output=True, check=False)
        if alive.returncode != 0:
            return
        time.sleep(0.2)
    raise AssertionError("dockerd did not stop within a minute of SIGTERM")


def engine_up() -> None:
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "docker-engine.sh")],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    if done.returncode != 0 or not engine_running():
        raise AssertionError(f"could not start the Docker engine again: {done.stderr[-2000:]}")


@contextlib.contextmanager
def restored_engine() -> Iterator[None]:
    """Whatever the body does to the engine, it runs again afterwards."""
    try:
        yield
    finally:
        if not engine_running():
            engine_up()


def outage(seconds: float) -> None:
    """Stop the engine, keep it down for ``seconds``, start it again."""
    with restored_engine():
        engine_down()
        time.sleep(seconds)
        engine_up()
