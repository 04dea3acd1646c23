"""A candidate's box: fresh namespaces, tmpfs and no privileges inside a reused container.

A zygote container (:mod:`galapagos_sandbox.zygote`) serves several candidates one after another.
Each candidate process is built by :func:`enter_box`, called in a child freshly forked from the
trusted runner (root in the container, capabilities ``SETUID``/``SETGID``/``KILL`` only):

1. it makes itself the preferred OOM victim and drops to the candidate uid/gid (no groups);
2. it enters new user, mount, PID, network, IPC and UTS namespaces at once (``unshare``), the user
   namespace mapping only the candidate's own uid/gid to itself;
3. it mounts fresh tmpfs on ``/tmp`` (sized by the task) and ``/dev/shm``, a fresh ``mqueue`` on
   ``/dev/mqueue`` and an empty read-only tmpfs over the runner's trusted directory, and brings
   up its own loopback interface;
4. it gives up every capability it holds in its user namespace (effective, permitted,
   inheritable, bounding) and installs a seccomp filter, on top of the container's profile, that
   refuses ``unshare``, ``setns`` and the mount calls: nothing it runs can build namespaces or
   mount anything.

The caller then forks the PID namespace's init (:func:`run_init`), which forks the candidate
process proper and exits when it does: the kernel then kills whatever else the candidate
started, so nothing outlives its box.  Files, ``/dev/shm``, SysV IPC and POSIX queues, abstract
Unix sockets and loopback ports, processes and hostnames all belong to the box and die with it;
the next candidate gets new ones.

Stdlib only; ``ctypes`` is imported here, once per container (the zygote imports this module
before it forks anything).
"""

from __future__ import annotations

import _socket
import ctypes
import fcntl
import os
import struct

__all__ = [
    "BOX_FLAGS",
    "BoxError",
    "candidate_filter",
    "drop_capabilities",
    "enter_box",
    "install_filter",
    "run_init",
]

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
#: The one ``unshare`` the container's seccomp profile allows (see harness/sandbox/seccomp.py).
BOX_FLAGS = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWUTS

_MS_NOSUID = 0x2
_MS_NODEV = 0x4
_MS_NOEXEC = 0x8
_MS_RDONLY = 0x1
_MS_REC = 0x4000
_MS_PRIVATE = 0x40000
_PR_SET_DUMPABLE = 4
_PR_CAPBSET_DROP = 24
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_CAP_VERSION_3 = 0x20080522
_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1
_SHM_MB = 8

_libc = ctypes.CDLL(None, use_errno=True)


class BoxError(OSError):
    """The box could not be built (the engine's kernel or profile refuses a step)."""


def _check(rc: int, what: str) -> None:
    if rc != 0:
        errno = ctypes.get_errno()
        raise BoxError(errno, f"{what}: {os.strerror(errno)}")


def _write(path: str, data: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, data.encode())
    finally:
        os.close(fd)


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    rc = _libc.mount(
        source.encode(), target.encode(), fstype.encode() if fstype else None, flags,
        data.encode() if data else None,
    )  # fmt: skip
    _check(rc, f"mount {fstype or 'propagation'} on {target}")


def _loopback_up() -> None:
    """Bring up ``lo`` in the fresh network namespace (as Docker's ``--network none`` has it)."""
    sock = _socket.socket(_socket.AF_INET, _socket.SOCK_DGRAM)
    try:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack_from("16sH", fcntl.ioctl(sock.fileno(), _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock.fileno(), _SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | _IFF_UP))
    finally:
        sock.close()


def enter_box(*, uid: int, gid: int, tmpfs_mb: int, hide: tuple[str, ...] = ()) -> None:
    """Steps 1–3 of the module docstring, in a freshly forked child of the (root) runner.

    Raises :class:`BoxError` when a step is refused.  Capabilities and the filter come later
    (:func:`drop_capabilities`, :func:`install_filter`), after the caller laid out its fds.
    """
    try:  # raising one's own oom_score_adj needs no privilege, but the file is root's
        _write("/proc/self/oom_score_adj", "1000")
    except OSError:
        pass
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getresuid() != (uid,) * 3 or os.getresgid() != (gid,) * 3:
        os._exit(71)  # never run candidate code with the runner's identity
    # The uid change made the process non-dumpable, which makes its /proc files root's: it
    # could not write its own id maps.  No other process of this uid exists in the container.
    _check(_libc.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0), "prctl(PR_SET_DUMPABLE)")
    _check(_libc.unshare(BOX_FLAGS), "unshare (user, mount, pid, net, ipc, uts namespaces)")
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")
    _check(_libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0), "prctl(PR_SET_DUMPABLE)")
    _mount("none", "/", None, _MS_REC | _MS_PRIVATE)
    private = _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
    _mount("tmpfs", "/tmp", "tmpfs", private, f"size={tmpfs_mb}m,mode=1777")
    _mount("tmpfs", "/dev/shm", "tmpfs", private, f"size={_SHM_MB}m,mode=1777")
    if os.path.isdir("/dev/mqueue"):
        _mount("mqueue", "/dev/mqueue", "mqueue", private)
    for path in hide:
        if os.path.isdir(path):
            _mount("tmpfs", path, "tmpfs", private | _MS_RDONLY, "size=4k,mode=0")
    _loopback_up()


def drop_capabilities() -> None:
    """Give up every capability held in the box's user namespace, the bounding set too."""
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            last = int(f.read())
    except (OSError, ValueError):
        last = 63
    for cap in range(last + 1):
        _check(_libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0), "prctl(PR_CAPBSET_DROP)")
    header = (ctypes.c_uint32 * 2)(_CAP_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable × 2 words, all zero
    _check(_libc.capset(header, data), "capset")


# -- the candidate's seccomp filter ------------------------------------------------------------

_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
#: Syscalls a candidate must never make, by architecture: namespace and mount calls (the
#: container's profile allows ``unshare`` and ``mount`` for building boxes; the rest it refuses
#: already, this is a second wall).
_DENIED = {
    "x86_64": {
        "mount": 165, "umount2": 166, "pivot_root": 155, "unshare": 272, "setns": 308,
        "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
        "fspick": 433, "mount_setattr": 442,
    },
    "aarch64": {
        "mount": 40, "umount2": 39, "pivot_root": 41, "unshare": 97, "setns": 268,
        "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
        "fspick": 433, "mount_setattr": 442,
    },
}  # fmt: skip
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO_EPERM = 0x00050000 | 1
_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K
_X32_BIT = 0x40000000


def candidate_filter(machine: str | None = None) -> bytes:
    """The BPF program (``struct sock_filter`` array) of the candidate's filter."""
    machine = machine or os.uname().machine
    if machine not in _AUDIT_ARCH:
        raise BoxError(0, f"no candidate seccomp filter for {machine}")
    denied = sorted(_DENIED[machine].values())
    prog: list[tuple[int, int, int, int]] = [(_LD_W_ABS, 0, 0, 4)]  # seccomp_data.arch
    # Anything else than this architecture's native calls (i386, x32) is refused outright.
    body: list[tuple[int, int, int, int]] = [(_LD_W_ABS, 0, 0, 0)]  # seccomp_data.nr
    if machine == "x86_64":
        body.append((_JGE_K, 0, 0, _X32_BIT))  # jt patched below
    body += [(_JEQ_K, 0, 0, nr) for nr in denied]  # jt patched below
    body.append((_RET_K, 0, 0, _RET_ALLOW))
    deny_at = len(body)  # index (within body) of the final "deny" return
    body.append((_RET_K, 0, 0, _RET_ERRNO_EPERM))
    for i, (code, _jt, jf, k) in enumerate(body):
        if code in (_JEQ_K, _JGE_K):
            body[i] = (code, deny_at - i - 1, jf, k)
    prog.append((_JEQ_K, 0, len(body) - 1, _AUDIT_ARCH[machine]))  # jf → the deny return
    # jf above counts from the instruction after it: the deny return is the body's last one.
    prog += body
    return b"".join(struct.pack("HBBI", *ins) for ins in prog)


def install_filter(program: bytes) -> None:
    """Install ``program`` as a seccomp filter of this process (inherited by its children)."""

    class _Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    buf = ctypes.create_string_buffer(program, len(program))
    fprog = _Fprog(len(program) // 8, ctypes.cast(buf, ctypes.c_void_p))
    _check(_libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
    rc = _libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0)
    _check(rc, "prctl(PR_SET_SECCOMP)")


# -- the box's init ----------------------------------------------------------------------------


def run_init(status_fd: int, close: tuple[int, ...] = ()) -> int:
    """Be PID 1 of the box: fork the candidate process, reap every orphan, and when the
    candidate process ends write its wait status (4 bytes) to ``status_fd`` and exit (the kernel
    then kills everything left in the box).  Returns 0 in the forked candidate process."""
    pid = os.fork()
    if pid == 0:
        os.close(status_fd)
        return 0
    for fd in close:
        try:
            os.close(fd)
        except OSError:
            pass
    while True:
        try:
            done, status = os.waitpid(-1, 0)
        except ChildProcessError:  # pragma: no cover - the candidate is always a child
            os._exit(0)
        except InterruptedError:  # pragma: no cover
            continue
        if done == pid:
            try:
                os.write(status_fd, struct.pack("<i", status))
            except OSError:
                pass
            os._exit(0)
