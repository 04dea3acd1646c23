"""Operating-system side of the candidate process: confinement, killing, OOM detection.

Inside the container the runner is root with only CAP_SETUID, CAP_SETGID and CAP_KILL (and
no-new-privileges).  A candidate process is forked from it and, before running anything
untrusted, makes itself the preferred OOM victim, drops to the candidate uid/gid with no
supplementary groups (which clears every capability and makes it non-dumpable, so it cannot
read the runner's ``/proc/<pid>/fd`` or ``environ``), sets rlimits, keeps only its own pipes and
moves into a private directory.

In a zygote container (``cfg.box``) the candidate process lives in a box of its own
(:mod:`galapagos_sandbox.box`): the uid change and the OOM preference happen while the box is
built, and killing the candidates means killing the box's init, never ``kill(-1)`` (which would
take the zygote with it).
"""

from __future__ import annotations

import fcntl
import os
import resource

# The C half of ``signal``: the module itself builds enums, which cost every container
# milliseconds of start-up CPU.
from _signal import SIGKILL, SIGSTOP

from galapagos_sandbox.config import RunnerConfig

__all__ = [
    "become_candidate",
    "in_container",
    "kill_all_candidates",
    "oom_kill_count",
    "stop_all_candidates",
]

_PR_SET_PDEATHSIG = 1
#: Scratch fds live at or above this number while the final layout is built.
_SPARE_FD = 64


def _close_from(first: int) -> None:
    try:
        open_fds = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        os.closerange(first, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
        return
    for fd in open_fds:
        if fd >= first:
            try:
                os.close(fd)
            except OSError:
                pass


def _set_rlimit(which: int, value: int) -> None:
    resource.setrlimit(which, (value, value))


def become_candidate(cfg: RunnerConfig, fds: dict[int, int]) -> str:
    """Confine the current (freshly forked) process; returns its private directory.

    ``fds`` maps target fd numbers to the fds that should end up there; every other fd is
    closed.  Runs before any candidate code, so it may trust its own memory.
    """
    contained = in_container(cfg)
    if not cfg.box:  # a box builder did this already, as root
        try:  # raising one's own oom_score_adj needs no privilege
            with open("/proc/self/oom_score_adj", "w") as f:
                f.write("1000")
        except OSError:
            pass
    # Move sources out of the way first so dup2 never clobbers a source it still needs.
    high = {
        target: fcntl.fcntl(src, fcntl.F_DUPFD_CLOEXEC, _SPARE_FD) for target, src in fds.items()
    }
    for target, src in high.items():
        os.dup2(src, target, inheritable=True)
    _close_from(max(fds) + 1)
    if cfg.uid is not None and not cfg.box:
        gid = cfg.gid if cfg.gid is not None else cfg.uid
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(cfg.uid, cfg.uid, cfg.uid)
        if os.getresuid() != (cfg.uid,) * 3 or os.getresgid() != (gid,) * 3:
            os._exit(71)  # never run candidate code with the runner's identity
    _set_rlimit(resource.RLIMIT_CORE, 0)
    _set_rlimit(resource.RLIMIT_NOFILE, cfg.nofile)
    _set_rlimit(resource.RLIMIT_FSIZE, cfg.fsize_mb << 20)
    cpu = int(cfg.wall_s) + 2  # a CPU-time backstop; the wall-clock deadline normally fires first
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    if cfg.memory_mb:
        _set_rlimit(resource.RLIMIT_AS, cfg.memory_mb << 20)
    if not contained and not cfg.box:
        # Die with the runner (set after the uid change, which clears it).  In a container
        # that is given: the runner is init's only child, and when it exits init does too,
        # which kills everything left in the container.
        try:
            import ctypes  # here only: a fresh candidate process is the one place it is needed

            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, SIGKILL)
        except (OSError, AttributeError, ImportError):
            pass
    os.umask(0o077)
    # One name for every candidate process of a job (the workdir is the job's own): a failure's
    # traceback shows this path, and the LLM reads it, so it must not carry a pid, which
    # depends on what else the container or machine ran before.
    private = os.path.join(cfg.workdir, "candidate")
    os.makedirs(private, mode=0o700, exist_ok=True)
    os.chdir(private)
    os.environ["HOME"] = private
    os.environ["TMPDIR"] = private
    return private


def in_container(cfg: RunnerConfig) -> bool:
    """True only when PID 1 is Docker's init: the one place ``kill(-1)`` is safe."""
    if not cfg.container or os.getpid() == 1:
        return False
    try:
        with open("/proc/1/cmdline", "rb") as f:
            init = f.read().split(b"\0", 1)[0]
    except OSError:
        return False
    return os.path.basename(init) in (b"docker-init", b"tini", b"tini-static")


def kill_all_candidates(cfg: RunnerConfig, pids: list[int]) -> None:
    """SIGKILL the candidate processes; in a container, every process but init and us (in a
    zygote container the candidate is its box's init: killing it empties the box)."""
    if cfg.uid is not None and not cfg.box and in_container(cfg):
        # kill(-1) walks the task list in the kernel, so a fork bomb cannot outrun it.
        try:
            os.kill(-1, SIGKILL)
        except ProcessLookupError:
            pass
        return
    for pid in pids:
        try:
            os.kill(pid, SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def stop_all_candidates(cfg: RunnerConfig) -> bool:
    """In a container, SIGSTOP every process but init and us; False where that is unsafe (the
    local backend, and zygote containers, whose zygote must live on)."""
    if cfg.uid is None or cfg.box or not in_container(cfg):
        return False
    try:
        os.kill(-1, SIGSTOP)
    except ProcessLookupError:
        pass
    return True


def oom_kill_count(cfg: RunnerConfig) -> int | None:
    """How many processes the kernel OOM-killed in this container's memory cgroup so far."""
    if not cfg.container:
        return None
    for path in ("/sys/fs/cgroup/memory/memory.oom_control", "/sys/fs/cgroup/memory.events"):
        try:
            with open(path) as f:
                for line in f:
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
        except (OSError, ValueError):
            continue
    return None
