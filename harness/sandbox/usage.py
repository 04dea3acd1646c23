"""What a sandbox costs, read from the host: the kernel's counters, never the sandbox's own word.

A process inside a sandbox can lie about itself (patch ``resource.getrusage``, rewrite
``/proc/self`` readings it parses, reset its RSS high-water mark); it cannot change what the
kernel accounts to its cgroup or shows the host under ``/proc/<pid>``.  A :class:`Meter` reads
those from the judge's side:

- :class:`CgroupMeter` — a container's cgroup (v1 or v2), located through
  ``/proc/<pid>/cgroup`` of its first process as the host sees it: CPU time of everything in the
  container, memory charged against its limit (and the kernel's high-water mark), tasks (threads
  and processes), and the limits themselves (CPU quota, memory, pids).
- :class:`EngineStatsMeter` — the same figures from the engine's stats endpoint, for engines
  whose cgroup files this host cannot see (a remote engine); slower (one request per reading).
- :class:`ProcMeter` — one local process (the ``local`` sandbox): ``/proc/<pid>/stat`` and
  ``status`` (CPU, ``VmHWM``, threads).  Only as good as ``/proc``: the process could reset its own
  high-water mark, which is one more reason the local sandbox is for trusted code only.

Peaks the kernel does not keep (``pids.peak`` or ``memory.peak`` on older kernels) are the
maximum of the readings taken, so a meter read often (the Valid(·) judge polls during calls)
comes close.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

__all__ = [
    "CgroupMeter",
    "EngineStatsMeter",
    "Meter",
    "ProcMeter",
    "Quota",
    "Usage",
    "container_meter",
]

_CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass(frozen=True)
class Usage:
    """One reading.  CPU is cumulative since the sandbox started; peaks are high-water marks."""

    cpu_s: float
    memory_bytes: int
    memory_peak_bytes: int
    tasks: int
    tasks_peak: int
    #: Times a fork/clone failed because the pids limit was reached (0 when unknown).
    pids_limit_hits: int = 0


@dataclass(frozen=True)
class Quota:
    """The sandbox's limits as the kernel (or engine) enforces them; None = none / unknown."""

    cpus: float | None = None
    memory_bytes: int | None = None
    pids: int | None = None


class Meter(Protocol):
    #: Where the figures come from ("cgroup v1", "cgroup v2", "engine stats", "/proc").
    source: str
    #: True when a reading is a few file reads (fine on an event loop); False for a request.
    cheap: bool

    def read(self) -> Usage: ...

    def quota(self) -> Quota: ...


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def _int(path: Path) -> int | None:
    text = _read(path)
    if text is None:
        return None
    text = text.strip()
    return None if text in ("", "max") else int(text)


def _keyed(path: Path, key: str) -> int | None:
    """``key value`` files (``cpu.stat``, ``pids.events``)."""
    for line in (_read(path) or "").splitlines():
        name, _, value = line.partition(" ")
        if name == key:
            return int(value)
    return None


def _mounts() -> dict[str, Path]:
    """Controller (or "unified") → the cgroup mount this host sees it at."""
    found: dict[str, Path] = {}
    for line in (_read(Path("/proc/self/mountinfo")) or "").splitlines():
        left, _, right = line.partition(" - ")
        fields, rest = left.split(), right.split()
        if len(fields) < 5 or len(rest) < 3:
            continue
        point = Path(fields[4])
        if rest[0] == "cgroup2":
            found.setdefault("unified", point)
        elif rest[0] == "cgroup":
            for option in rest[2].split(","):
                found.setdefault(option, point)
    return found


class CgroupMeter:
    cheap = True

    def __init__(self, dirs: dict[str, Path], version: int) -> None:
        self.dirs = dirs
        self.version = version
        self.source = f"cgroup v{version}"
        self._tasks_peak = 0
        self._memory_peak = 0
        self._last: Usage | None = None
        # The kernel's pids.peak counts the runtime's own start-up processes too (runc's init,
        # the container's init: 5 here for a container whose steady state is 2); it counts only
        # once it rises above what it was when this meter was made.
        self._pids_floor = _int(dirs["pids"] / "pids.peak") or 0

    @classmethod
    def for_pid(cls, pid: int) -> CgroupMeter | None:
        """The meter of the cgroup ``pid`` is in, or None when this host cannot read it."""
        text = _read(Path(f"/proc/{pid}/cgroup"))
        if not text:
            return None
        mounts = _mounts()
        v1: dict[str, Path] = {}
        v2: Path | None = None
        for line in text.splitlines():
            _, controllers, rel = line.split(":", 2)
            rel = rel.lstrip("/")
            if controllers == "" and "unified" in mounts:
                v2 = mounts["unified"] / rel
            for controller in controllers.split(","):
                if controller in mounts:
                    v1[controller] = mounts[controller] / rel
        if {"memory", "cpuacct", "pids"} <= set(v1) and (
            v1["memory"] / "memory.usage_in_bytes"
        ).exists():
            return cls(v1, 1)
        if v2 is not None and (v2 / "memory.current").exists() and (v2 / "cpu.stat").exists():
            return cls({"memory": v2, "cpu": v2, "cpuacct": v2, "pids": v2}, 2)
        return None

    def read(self) -> Usage:
        mem, cpu, pids = self.dirs["memory"], self.dirs["cpuacct"], self.dirs["pids"]
        if self.version == 1:
            usage_ns = _int(cpu / "cpuacct.usage")
            cpu_s = None if usage_ns is None else usage_ns / 1e9
            current = _int(mem / "memory.usage_in_bytes") or 0
            peak = _int(mem / "memory.max_usage_in_bytes")
        else:
            usage_us = _keyed(cpu / "cpu.stat", "usage_usec")
            cpu_s = None if usage_us is None else usage_us / 1e6
            current = _int(mem / "memory.current") or 0
            peak = _int(mem / "memory.peak")
        if cpu_s is None:  # the container is gone and its cgroup with it: the last reading
            return self._last or Usage(0.0, 0, self._memory_peak, 0, self._tasks_peak)
        tasks = _int(pids / "pids.current") or 0
        self._memory_peak = max(self._memory_peak, current, peak or 0)
        kernel_peak = _int(pids / "pids.peak") or 0
        self._tasks_peak = max(
            self._tasks_peak, tasks, kernel_peak if kernel_peak > self._pids_floor else 0
        )
        self._last = Usage(
            cpu_s=cpu_s,
            memory_bytes=current,
            memory_peak_bytes=self._memory_peak,
            tasks=tasks,
            tasks_peak=self._tasks_peak,
            pids_limit_hits=_keyed(pids / "pids.events", "max") or 0,
        )
        return self._last

    def quota(self) -> Quota:
        cpu, mem, pids = (
            self.dirs.get("cpu", self.dirs["cpuacct"]),
            self.dirs["memory"],
            self.dirs["pids"],
        )
        cpus = None
        if self.version == 1:
            quota_us, period_us = _int(cpu / "cpu.cfs_quota_us"), _int(cpu / "cpu.cfs_period_us")
            if quota_us and quota_us > 0 and period_us:
                cpus = quota_us / period_us
            memory = _int(mem / "memory.limit_in_bytes")
        else:
            parts = (_read(cpu / "cpu.max") or "max").split()
            if parts[0] != "max" and len(parts) == 2:
                cpus = int(parts[0]) / int(parts[1])
            memory = _int(mem / "memory.max")
        if memory is not None and memory >= 1 << 60:  # v1 writes "no limit" as a huge number
            memory = None
        return Quota(cpus=cpus, memory_bytes=memory, pids=_int(pids / "pids.max"))


class EngineStatsMeter:
    """The engine's stats endpoint (one request per reading)."""

    cheap = False
    source = "engine stats"

    def __init__(self, container: Any) -> None:
        self.container = container
        self._tasks_peak = 0
        self._memory_peak = 0

    def read(self) -> Usage:
        stats = self.container.stats(stream=False, one_shot=True)
        memory = stats.get("memory_stats") or {}
        current = int(memory.get("usage") or 0)
        tasks = int((stats.get("pids_stats") or {}).get("current") or 0)
        self._memory_peak = max(self._memory_peak, current, int(memory.get("max_usage") or 0))
        self._tasks_peak = max(self._tasks_peak, tasks)
        cpu = ((stats.get("cpu_stats") or {}).get("cpu_usage") or {}).get("total_usage") or 0
        return Usage(
            cpu_s=int(cpu) / 1e9,
            memory_bytes=current,
            memory_peak_bytes=self._memory_peak,
            tasks=tasks,
            tasks_peak=self._tasks_peak,
        )

    def quota(self) -> Quota:
        host = self.container.attrs.get("HostConfig") or {}
        nano = host.get("NanoCpus") or 0
        return Quota(
            cpus=nano / 1e9 if nano else None,
            memory_bytes=host.get("Memory") or None,
            pids=host.get("PidsLimit") or None,
        )


class ProcMeter:
    """One local process, from ``/proc/<pid>`` (the ``local`` sandbox)."""

    cheap = True
    source = "/proc"

    def __init__(self, pid: int, *, memory_limit: int | None = None) -> None:
        self.pid = pid
        self.memory_limit = memory_limit
        self._tasks_peak = 0
        self._cpu_s = 0.0
        self._memory_peak = 0

    def read(self) -> Usage:
        stat = _read(Path(f"/proc/{self.pid}/stat"))
        status = _read(Path(f"/proc/{self.pid}/status"))
        if stat is not None:
            fields = stat.rpartition(")")[2].split()
            # utime, stime, cutime, cstime are fields 14-17 (1-based; the first two precede ")").
            ticks = sum(int(v) for v in fields[11:15])
            self._cpu_s = max(self._cpu_s, ticks / _CLK_TCK)
        values: dict[str, int] = {}
        for line in (status or "").splitlines():
            name, _, rest = line.partition(":")
            if name in ("VmHWM", "VmRSS", "Threads"):
                with contextlib.suppress(ValueError, IndexError):
                    values[name] = int(rest.split()[0])
        tasks = values.get("Threads", 0)
        self._tasks_peak = max(self._tasks_peak, tasks)
        current = values.get("VmRSS", 0) << 10
        self._memory_peak = max(self._memory_peak, current, values.get("VmHWM", 0) << 10)
        return Usage(
            cpu_s=self._cpu_s,
            memory_bytes=current,
            memory_peak_bytes=self._memory_peak,
            tasks=tasks,
            tasks_peak=self._tasks_peak,
        )

    def quota(self) -> Quota:
        return Quota(memory_bytes=self.memory_limit)


def container_meter(container: Any) -> Meter:
    """The cheapest meter that works for a started container (``attrs`` loaded after start)."""
    pid = int((container.attrs.get("State") or {}).get("Pid") or 0)
    meter = CgroupMeter.for_pid(pid) if pid else None
    return meter if meter is not None else EngineStatsMeter(container)
