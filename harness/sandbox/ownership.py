"""Container labels, owner identity and reaping of orphans left by dead processes.

Every container carries ``galapagos=1`` and ``galapagos.owner=<boot id>/<pid namespace>/<pid>/
<start time>`` naming the process that created it.  An owner is dead when it ran on this boot in
our PID namespace and no process with that pid and start time exists, or when it ran on a
previous boot.  Containers of live
owners (other test runs, other orchestrators on the same engine) are never touched, and neither
is anything without our label.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from datetime import datetime

import docker
import docker.errors
import requests.exceptions

__all__ = [
    "LABEL",
    "OWNER_LABEL",
    "RUN_LABEL",
    "owner_alive",
    "owner_id",
    "reap_orphans",
    "remove_containers",
    "remove_run",
]

log = logging.getLogger(__name__)

LABEL = "galapagos"
OWNER_LABEL = "galapagos.owner"
RUN_LABEL = "galapagos.run"
BACKEND_LABEL = "galapagos.backend"
ROLE_LABEL = "galapagos.role"


def _boot_id() -> str:
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip()
    except OSError:
        return "unknown-boot"


def _start_time(pid: int) -> str | None:
    """Start time of ``pid`` in clock ticks since boot (field 22 of /proc/<pid>/stat)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    # The command name may contain spaces and parentheses; fields follow the last ')'.
    return stat.rsplit(")", 1)[1].split()[19]


def _pid_namespace() -> str:
    try:
        return os.readlink("/proc/self/ns/pid").strip("pid:[]")
    except OSError:
        return "unknown-ns"


def owner_id(pid: int | None = None) -> str:
    """``<boot id>/<pid namespace>/<pid>/<start time>`` of this (or another local) process."""
    pid = os.getpid() if pid is None else pid
    return f"{_boot_id()}/{_pid_namespace()}/{pid}/{_start_time(pid) or '0'}"


def _boot_time() -> float:
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/stat") as f:
            for line in f:
                if line.startswith("btime "):
                    return float(line.split()[1])
    return 0.0


def owner_alive(owner: str, created: float | None = None) -> bool:
    """Whether the process named by ``owner`` may still be alive (unknown → alive)."""
    try:
        boot, namespace, pid_text, start = owner.split("/")
        pid = int(pid_text)
    except ValueError:
        return True  # not our format: leave it alone
    if boot == _boot_id() and namespace != _pid_namespace():
        return True  # a process we cannot see from here (another PID namespace)
    if boot != _boot_id():
        # Another machine sharing the engine, or an earlier boot of this one: only the latter
        # is provably dead, and only if the container predates this boot.
        return not (created is not None and created < _boot_time())
    return _start_time(pid) == start


def _created(container: docker.models.containers.Container) -> float | None:
    text = container.attrs.get("Created", "")
    with contextlib.suppress(ValueError):
        # Docker uses RFC 3339 with nanoseconds; keep microseconds for fromisoformat.
        head, _, frac = text.rstrip("Z").partition(".")
        return datetime.fromisoformat(f"{head}.{frac[:6] or '0'}+00:00").timestamp()
    return None


def remove_containers(
    containers: list[docker.models.containers.Container], *, warn_unanswered: bool = True
) -> list[str]:
    """Force-remove ``containers``; the names of those now gone (or going).  Containers the
    engine did not answer for are named in one warning (unless ``warn_unanswered`` is off:
    the caller retries them)."""
    removed = []
    unanswered: list[str] = []
    last: Exception | None = None
    for container in containers:
        try:
            container.remove(force=True, v=True)
            removed.append(container.name)
        except docker.errors.NotFound:
            removed.append(container.name)
        except docker.errors.APIError as exc:
            if _removal_in_progress(exc):  # another remover got there first: it is going
                removed.append(container.name)
            else:
                log.warning("could not remove container %s: %s", container.name, exc)
        except requests.exceptions.RequestException as exc:
            unanswered.append(container.name)
            last = exc
    if unanswered and warn_unanswered:
        # The engine is down (an outage): one line, not one per container.  They carry our
        # labels, so the run's clean-up after the outage, or a later reap, removes them.
        log.warning(
            "could not remove %d sandbox container(s) (%s): the Docker engine did not answer "
            "(%s); they are removed once it is back (or by galapagos sandbox gc)",
            len(unanswered),
            ", ".join(unanswered[:3]) + (", …" if len(unanswered) > 3 else ""),
            last,
        )
    return removed


def _removal_in_progress(exc: docker.errors.APIError) -> bool:
    """The engine's 409 "removal of container … is already in progress"."""
    status = getattr(exc, "status_code", None)
    return status == 409 and "already in progress" in str(exc)


def reap_orphans(client: docker.DockerClient) -> list[str]:
    """Remove Galapagos containers whose owner process is dead; returns their names."""
    started = time.monotonic()
    containers = client.containers.list(all=True, ignore_removed=True, filters={"label": LABEL})
    orphans = [
        c
        for c in containers
        if OWNER_LABEL in c.labels and not owner_alive(c.labels[OWNER_LABEL], _created(c))
    ]
    removed = remove_containers(orphans)
    if removed:
        log.info(
            "reaped %d orphaned sandbox containers in %.2fs",
            len(removed),
            time.monotonic() - started,
        )
    return removed


def remove_run(client: docker.DockerClient, run_id: str) -> list[str]:
    """Remove every container of run ``run_id`` (an explicit request: owners may be alive)."""
    containers = client.containers.list(
        all=True, ignore_removed=True, filters={"label": f"{RUN_LABEL}={run_id}"}
    )
    return remove_containers(containers)
