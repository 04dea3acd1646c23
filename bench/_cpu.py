"""CPU and memory accounting for benchmarks on a machine others use too.

- :func:`machine_busy_s` — CPU-seconds the whole machine spent busy (``/proc/stat``): complete,
  but it counts everyone's work; :func:`background_rate` measures what the others add per second.
- :class:`SandboxCPU` — CPU attributed to one Docker backend's work, whatever else runs: this
  process (all threads), the cgroups of the backend's containers, their ``containerd-shim``
  processes (and the ``runc`` calls they reaped), and the engine's daemons (``dockerd``,
  ``containerd``: shared with every other user of the engine, so reported apart).
- :func:`tree_pss_mb` / :class:`PeakMemory` — proportional set size of a process tree plus the
  processes of the containers it owns (and their shims), sampled; PSS counts a page shared by n
  processes 1/n each, so forked workers and containers that share an image are not counted twice.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = [
    "PeakMemory",
    "SandboxCPU",
    "background_rate",
    "machine_busy_s",
    "tree_pss_mb",
]

TICK = os.sysconf("SC_CLK_TCK")
CGROUP_ROOTS = ("/sys/fs/cgroup/cpuacct/docker", "/sys/fs/cgroup/cpu,cpuacct/docker")


def machine_busy_s() -> float:
    """CPU-seconds the whole machine has spent busy (user, nice, system, irq, softirq)."""
    with open("/proc/stat") as f:
        user, nice, system, _idle, _iowait, irq, softirq = (
            int(v) for v in f.readline().split()[1:8]
        )
    return (user + nice + system + irq + softirq) / TICK


def background_rate(seconds: float = 3.0) -> float:
    """Busy cores the machine shows while this process idles (everyone else's work)."""
    start, t0 = machine_busy_s(), time.monotonic()
    time.sleep(seconds)
    return (machine_busy_s() - start) / (time.monotonic() - t0)


def _stat(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None


def process_cpu_s(pid: int, children: bool = False) -> float:
    """utime + stime of ``pid`` (all its threads), plus its reaped children's if asked."""
    fields = _stat(pid)
    if fields is None:
        return 0.0
    ticks = int(fields[11]) + int(fields[12])
    if children:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / TICK


def _pids_named(names: Iterable[str]) -> list[int]:
    wanted, found = set(names), []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/comm") as f:
                    if f.read().strip() in wanted:
                        found.append(int(entry))
            except OSError:
                pass
    return found


def _container_cpu_s(cid: str) -> float | None:
    for root in CGROUP_ROOTS:
        try:
            with open(f"{root}/{cid}/cpuacct.usage") as f:
                return int(f.read()) / 1e9
        except OSError:
            continue
    return None


def _cgroup_pids(cid: str) -> list[int]:
    for controller in ("pids", "memory", "cpuacct"):
        try:
            with open(f"/sys/fs/cgroup/{controller}/docker/{cid}/cgroup.procs") as f:
                return [int(line) for line in f if line.strip()]
        except OSError:
            continue
    return []


def _ppid(pid: int) -> int | None:
    fields = _stat(pid)
    return int(fields[1]) if fields else None


def shim_of(cid: str) -> int | None:
    """The ``containerd-shim`` process of a running container (the parent of its init)."""
    pids = _cgroup_pids(cid)
    for pid in sorted(pids):
        parent = _ppid(pid)
        if parent and parent not in pids:
            return parent
    return None


@dataclass
class SandboxCPU:
    """CPU attributed to a backend's containers between :meth:`start` and :meth:`stop`.

    ``containers()`` names the containers to count (ids); a container removed before ``stop``
    loses the part of its CPU spent after ``start``, so keep them alive across the window."""

    containers: object  # Callable[[], Iterable[str]]
    own: float = 0.0
    cgroups: float = 0.0
    shims: float = 0.0
    engine: float = 0.0
    _marks: dict[str, float] = field(default_factory=dict)

    def _read(self) -> dict[str, float]:
        marks = {"own": process_cpu_s(os.getpid())}
        for cid in self.containers():  # type: ignore[operator]
            cpu = _container_cpu_s(cid)
            if cpu is not None:
                marks[f"cg:{cid}"] = cpu
            shim = shim_of(cid)
            if shim is not None:
                marks[f"shim:{cid}:{shim}"] = process_cpu_s(shim, children=True)
        for pid in _pids_named(("dockerd", "containerd")):
            marks[f"engine:{pid}"] = process_cpu_s(pid, children=True)
        return marks

    def start(self) -> None:
        self._marks = self._read()

    def stop(self) -> None:
        end = self._read()
        totals = {"own": 0.0, "cg": 0.0, "shim": 0.0, "engine": 0.0}
        for key, value in end.items():
            kind = key.split(":", 1)[0]
            totals[kind] += value - self._marks.get(key, 0.0 if kind != "own" else value)
        self.own, self.cgroups = totals["own"], totals["cg"]
        self.shims, self.engine = totals["shim"], totals["engine"]

    @property
    def sandbox_s(self) -> float:
        """Everything but the engine's daemons."""
        return self.own + self.cgroups + self.shims

    @property
    def total_s(self) -> float:
        return self.sandbox_s + self.engine


def _pss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            parent = _ppid(int(entry))
            if parent is not None:
                children.setdefault(parent, []).append(int(entry))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, ()))
    return out


def tree_pss_mb(root: int, containers: Iterable[str] = ()) -> float:
    """PSS of ``root`` and its descendants, plus every process of ``containers`` and their
    shims (MiB)."""
    pids = set(_descendants(root))
    for cid in containers:
        pids.update(_cgroup_pids(cid))
        shim = shim_of(cid)
        if shim is not None:
            pids.add(shim)
    return sum(_pss_kb(pid) for pid in pids) / 1024


class PeakMemory:
    """Samples :func:`tree_pss_mb` of a process (and the containers it owns) in a thread, and
    the CPU those containers and their shims used (the last reading of each).

    Containers are found by their ``galapagos.owner`` label naming the process's pid."""

    def __init__(self, pid: int, interval_s: float = 0.1) -> None:
        self.pid, self.interval = pid, interval_s
        self.peak_mb = 0.0
        self.samples = 0
        self.container_cpu: dict[str, float] = {}
        self._stop = threading.Event()
        self.owned: dict[str, bool] = {}
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._client = None

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _ours(self) -> list[str]:
        root = next((r for r in CGROUP_ROOTS if os.path.isdir(r)), None)
        if root is None:
            return []
        pattern = re.compile(rf"/{self.pid}/")
        for cid in os.listdir(root):
            if len(cid) == 64 and cid not in self.owned:
                self.owned[cid] = self._labelled(cid, pattern)
        return [cid for cid, ours in self.owned.items() if ours]

    def _labelled(self, cid: str, pattern: re.Pattern[str]) -> bool:
        import docker
        import docker.errors

        if self._client is None:
            self._client = docker.from_env(timeout=30)
        try:
            labels = self._client.api.inspect_container(cid)["Config"]["Labels"] or {}
        except docker.errors.APIError:
            return False
        return bool(pattern.search(labels.get("galapagos.owner", "")))

    @property
    def containers_cpu_s(self) -> float:
        """CPU of the owned containers (their cgroups) and their shims, as last read."""
        return sum(self.container_cpu.values())

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                ours = self._ours()
                mb = tree_pss_mb(self.pid, ours)
                for cid in ours:
                    cpu = _container_cpu_s(cid)
                    shim = shim_of(cid)
                    if cpu is not None:
                        cpu += process_cpu_s(shim, children=True) if shim else 0.0
                        self.container_cpu[cid] = max(cpu, self.container_cpu.get(cid, 0.0))
            except OSError:
                mb = 0.0
            self.peak_mb = max(self.peak_mb, mb)
            self.samples += 1
            self._stop.wait(self.interval)
