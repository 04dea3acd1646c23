"""Which process owns a run: a token that survives PID reuse (boot id + pid + start time)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["owner_alive", "owner_token"]


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
