"""The runner's start-up configuration, passed as one JSON argument by the backend.

It is fixed when the container (or local process) starts, before any job exists, because the
candidate process is forked and confined at that point; a warm pool therefore keys its
containers by everything in here.  (A plain class: ``dataclasses`` is slow to import.)
"""

from __future__ import annotations

from galapagos_sandbox import jsonc

# typing costs milliseconds of container start-up; annotations are strings anyway.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["RunnerConfig"]

_DEFAULTS: dict[str, Any] = {
    # Modules imported before the job arrives (inherited by the pre-forked candidate process).
    "preload": (),
    # uid/gid the candidate runs as; None keeps the runner's (local, unsafe backend).
    "uid": None,
    "gid": None,
    # Parent of the candidate's private working directory.
    "workdir": "/tmp",
    # Root-only directory for trusted task files.
    "trusted_dir": "/run/galapagos",
    # True only inside a container whose PID 1 is docker-init: enables killing every candidate
    # process with kill(-1) and reading the memory cgroup's OOM counter.
    "container": False,
    # Where the openevolve/skydiscover shims live (put on sys.path in compat mode).
    "compat_path": "/opt/galapagos/compat",
    # Interpreter (and its flags) used to start a fresh candidate process after one died.
    "python": "/usr/bin/python3",
    "python_flags": ("-P", "-s"),
    "wall_s": 60.0,
    "output_bytes": 1 << 20,
    "nofile": 256,
    "fsize_mb": 64,
    # Address-space limit for the candidate (local backend only; containers use the cgroup).
    "memory_mb": None,
    "max_job_bytes": 64 << 20,
    # A sealed task frame follows on stdin before ``ready`` (warm pools install the evaluator
    # ahead of the job; the job then names the task by digest and carries no files).
    "task": False,
    # Every candidate process in its own box (fresh user/mount/pid/net/ipc namespaces, see
    # ``galapagos_sandbox.box``): set for zygote containers, which serve several jobs in turn.
    "box": False,
    # Jobs a zygote container serves before it retires (``galapagos_sandbox.zygote``).
    "max_jobs": 1,
    # Size of each box's /tmp (MiB).
    "tmpfs_mb": 64,
    # Compat jobs whose evaluator runs ``[sys.executable, script]``: the candidate process
    # forks a warm interpreter for it before the job (``galapagos_sandbox.warm``).
    "warm_python": False,
}


class RunnerConfig:
    """Immutable bag of the settings above (``RunnerConfig(wall_s=3, …)``)."""

    preload: tuple[str, ...]
    uid: int | None
    gid: int | None
    workdir: str
    trusted_dir: str
    container: bool
    compat_path: str
    python: str
    python_flags: tuple[str, ...]
    wall_s: float
    output_bytes: int
    nofile: int
    fsize_mb: int
    memory_mb: int | None
    max_job_bytes: int
    task: bool
    box: bool
    max_jobs: int
    tmpfs_mb: int
    warm_python: bool

    def __init__(self, **settings: Any) -> None:
        unknown = set(settings) - set(_DEFAULTS)
        if unknown:
            raise ValueError(f"unknown runner config keys: {sorted(unknown)}")
        values = {**_DEFAULTS, **settings}
        values["preload"] = tuple(values["preload"] or ())
        values["python_flags"] = tuple(values["python_flags"] or ())
        for key, value in values.items():
            object.__setattr__(self, key, value)

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError("RunnerConfig is immutable")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RunnerConfig) and self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]

    def to_json(self) -> str:
        d = {key: getattr(self, key) for key in _DEFAULTS}
        d["preload"] = list(self.preload)
        d["python_flags"] = list(self.python_flags)
        return jsonc.dumps(d, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> RunnerConfig:
        return cls(**jsonc.loads(text))
