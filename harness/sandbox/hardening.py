"""Hardened container creation, shared by evaluation jobs and long-lived strategy servers.

Every container Galapagos starts goes through :func:`create_hardened_container`; the settings
follow the checklist in ``reference/sandboxes.md`` §6:

- no network (``network_mode="none"``), read-only root, sized tmpfs for ``/tmp`` (the candidate's
  scratch space) and a root-only ``/run/galapagos`` for trusted files, small ``/dev/shm``;
- ``cap_drop=ALL`` plus only the runner's ``SETUID``/``SETGID`` (to drop to the candidate uid)
  and ``KILL`` (to kill the candidate's processes); ``no-new-privileges``; Docker's default
  seccomp profile, or for zygote containers our own (:mod:`harness.sandbox.seccomp`);
- memory limit with swap equal to it (no swap), pids limit, CPU quota, ulimits (nofile, fsize,
  core 0); the log driver is ``none`` (we read a capped attach stream instead);
- minimal environment (no API keys, no host paths), tini as PID 1, labels for reaping;
- stdin open and closed when the host detaches (``StdinOnce``), so an orphaned container's
  runner sees EOF and exits.

The caller owns the lifetime: create → attach → start → … → ``remove(force=True, v=True)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import docker
import docker.errors
import requests.exceptions
from docker.models.containers import Container
from docker.types import LogConfig, Ulimit

from harness.core.errors import SandboxError, SandboxUnavailable
from harness.sandbox.protocol import Limits

__all__ = [
    "CANDIDATE_UID",
    "RUNNER_CAPS",
    "TRUSTED_DIR",
    "ContainerSpec",
    "container_kwargs",
    "create_hardened_container",
    "minimal_env",
]

#: uid/gid of candidate processes (unlikely to own anything on a host; no passwd entry needed).
CANDIDATE_UID = 61000
#: Capabilities the runner keeps: change uid/gid once, kill the candidate's processes.
RUNNER_CAPS = ("SETUID", "SETGID", "KILL")
TRUSTED_DIR = "/run/galapagos"
#: Root-only tmpfs for task files (task folders are capped at 16 MiB by the loader).
TRUSTED_TMPFS_MB = 32
SHM_MB = 8


def minimal_env(*, pythonpath: str, home: str = "/tmp") -> dict[str, str]:
    """The whole environment a sandboxed process gets: no secrets, one thread per BLAS."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": home,
        "TMPDIR": home,
        "PYTHONPATH": pythonpath,
        "PYTHONDONTWRITEBYTECODE": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "NUMEXPR_NUM_THREADS": "1",
    }


@dataclass(frozen=True)
class ContainerSpec:
    """What varies between hardened containers; everything else is fixed policy."""

    image: str
    command: tuple[str, ...]
    limits: Limits
    labels: Mapping[str, str]
    env: Mapping[str, str]
    name: str | None = None
    cap_add: tuple[str, ...] = RUNNER_CAPS
    #: The process starts as root so the runner can drop the candidate to CANDIDATE_UID;
    #: a server that never needs that should pass a non-root ``user`` and ``cap_add=()``.
    user: str = "0:0"
    #: Extra tmpfs mounts (path → mount options), added to /tmp and the trusted dir.
    tmpfs: Mapping[str, str] = field(default_factory=dict)
    working_dir: str = "/"
    #: OCI runtime, e.g. ``"runsc"`` where gVisor is installed (a kernel boundary).
    runtime: str | None = None
    #: A seccomp profile (JSON) instead of Docker's default: zygote containers use
    #: :func:`harness.sandbox.seccomp.profile_json`, which lets the trusted runner build boxes.
    seccomp: str | None = None


def container_kwargs(spec: ContainerSpec) -> dict[str, Any]:
    """docker-py ``containers.create`` arguments for ``spec`` (pure; tested without Docker)."""
    lim = spec.limits
    if lim.tmpfs_mb + SHM_MB >= lim.memory_mb:
        raise ValueError(
            f"tmpfs ({lim.tmpfs_mb} MiB) must stay below the memory limit ({lim.memory_mb} MiB): "
            "tmpfs pages are charged to the container's memory"
        )
    memory = f"{lim.memory_mb}m"
    tmpfs = {
        "/tmp": f"rw,nosuid,nodev,noexec,size={lim.tmpfs_mb}m,mode=1777",
        TRUSTED_DIR: f"rw,nosuid,nodev,noexec,size={TRUSTED_TMPFS_MB}m,mode=0700",
        **spec.tmpfs,
    }
    kwargs: dict[str, Any] = {
        "image": spec.image,
        "command": list(spec.command),
        "name": spec.name,
        "labels": dict(spec.labels),
        "environment": dict(spec.env),
        "user": spec.user,
        "working_dir": spec.working_dir,
        "hostname": "sandbox",  # not the container id
        # detach=False + stdin_open makes docker-py set StdinOnce: stdin closes on detach.
        "detach": False,
        "stdin_open": True,
        "tty": False,
        "network_mode": "none",
        # …and no network endpoint at all: the engine then skips its per-container network hook
        # (a re-exec of dockerd by runc, ~40 ms of CPU per container start measured here).
        "network_disabled": True,
        "read_only": True,
        "tmpfs": tmpfs,
        "shm_size": f"{SHM_MB}m",
        "ipc_mode": "private",
        "cap_drop": ["ALL"],
        "cap_add": list(spec.cap_add),
        "security_opt": ["no-new-privileges:true"]
        + ([f"seccomp={spec.seccomp}"] if spec.seccomp else []),
        "mem_limit": memory,
        "memswap_limit": memory,
        "pids_limit": lim.pids,
        "nano_cpus": int(lim.cpus * 1e9),
        "ulimits": [
            Ulimit(name="nofile", soft=lim.nofile, hard=lim.nofile),
            Ulimit(name="fsize", soft=lim.fsize_mb << 20, hard=lim.fsize_mb << 20),
            Ulimit(name="core", soft=0, hard=0),
        ],
        "log_config": LogConfig(type="none"),
        "init": True,
        "auto_remove": False,
        "privileged": False,
    }
    if spec.runtime:
        kwargs["runtime"] = spec.runtime
    return kwargs


def create_hardened_container(client: docker.DockerClient, spec: ContainerSpec) -> Container:
    """Create (not start) a hardened container; map engine errors to SandboxError."""
    try:
        return client.containers.create(**container_kwargs(spec))
    except docker.errors.ImageNotFound as exc:
        raise SandboxUnavailable(
            f"sandbox image {spec.image} is not built; run `galapagos sandbox build`"
        ) from exc
    except (docker.errors.APIError, requests.exceptions.RequestException) as exc:
        raise SandboxError(f"the Docker engine refused to create a container: {exc}") from exc
