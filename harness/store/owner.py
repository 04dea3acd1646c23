"""Which process owns a run, and whether it is alive — on this host or another.

The owner token (boot id + pid + start time) survives PID reuse.  A token of this boot is
checked directly (the process exists or not).  A token of another boot belongs to a process on
another host (a Ray worker node, a second machine sharing the store) — or to this host before a
reboot — and is judged by the run's heartbeat: the owner writes ``heartbeat_at`` every
:data:`HEARTBEAT_S` seconds, and a run whose owner has not beaten for :data:`STALE_S` is dead:
shown ``interrupted`` and resumable; a fresh heartbeat means a live run elsewhere, which
``resume`` refuses to take over.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.core.store import RunRecord

__all__ = ["HEARTBEAT_S", "STALE_S", "owner_alive", "owner_token", "run_alive"]

#: How often an owner beats (seconds).
HEARTBEAT_S = 5.0
#: A heartbeat older than this means the owner is gone (six beats missed).
STALE_S = 30.0


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "unknown"


def _start_time(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # Field 22 (starttime) follows the parenthesised command name, which may contain spaces.
    return stat.rsplit(")", 1)[1].split()[19]


def owner_token(pid: int | None = None) -> str:
    pid = os.getpid() if pid is None else pid
    return f"{_boot_id()}:{pid}:{_start_time(pid) or '?'}"


def owner_alive(token: str) -> bool:
    """True if the process that wrote ``token`` is still running (same boot, pid, start time)."""
    try:
        boot, pid_text, start = token.split(":")
        pid = int(pid_text)
    except ValueError:
        return False
    return boot == _boot_id() and _start_time(pid) == start


def local_owner(token: str) -> bool:
    """Whether ``token`` names a process of this boot of this host."""
    return token.split(":", 1)[0] == _boot_id()


def run_alive(run: RunRecord, *, now: float | None = None, stale_s: float = STALE_S) -> bool:
    """Whether ``run`` is running with a live owner: this host's process exists, or another
    host's owner beat within ``stale_s`` (see the module docstring)."""
    if run.status != "running":
        return False
    if local_owner(run.owner):
        return owner_alive(run.owner)
    if run.heartbeat_at is None:
        return False
    return (time.time() if now is None else now) - run.heartbeat_at < stale_s
