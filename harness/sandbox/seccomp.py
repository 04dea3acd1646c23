"""The seccomp profile of reused ("zygote") sandbox containers: Docker's default, plus boxes.

A zygote container builds a fresh box (user, mount, PID, network, IPC, UTS namespaces) for every
candidate, which takes two calls Docker's default profile refuses to a container without
``CAP_SYS_ADMIN``: ``unshare`` and ``mount``.  This profile is an allow-list written the way
Docker's default is (every call an unprivileged numpy/scipy program and our runtime make; refused
with ``EPERM`` otherwise) with those two added for the trusted box builder:

- ``unshare`` only with exactly the box's flag set (:data:`BOX_FLAGS`);
- ``mount`` (the box builder mounts its tmpfs inside its own user namespace; without a user
  namespace the kernel refuses it to a process without ``CAP_SYS_ADMIN``, which no process in
  the container has).

Every candidate then installs a second filter of its own before any of its code runs
(``galapagos_sandbox.box.install_filter``) that refuses ``unshare``, ``setns`` and every mount
call, so a candidate's syscall surface is this profile minus those: never wider than under
Docker's default profile.  Refused here for everyone, where Docker's default allows them:
``ptrace``, ``process_vm_readv``/``writev``, ``io_uring_*`` (a kernel surface nothing here
needs, and a channel between concurrent boxes isolate's authors close), ``modify_ldt``,
``adjtimex``/``clock_adjtime``.

Calls a kernel newer than the engine's seccomp library may not be known by name; the engine's
runtime answers calls newer than everything it knows with ``ENOSYS`` (so C libraries fall back),
as it does for Docker's own profile.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["ALLOWED", "BOX_FLAGS", "DENIED", "profile_json"]

CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
#: Must equal ``galapagos_sandbox.box.BOX_FLAGS`` (a test checks it).
BOX_FLAGS = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWUTS
#: ``clone`` may create no namespace (the box builder uses ``unshare``, then ``fork``).
_CLONE_NS = (
    CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID
    | CLONE_NEWNET
)  # fmt: skip
_AF_VSOCK = 40
#: personality(2) values a program may set or query (Linux, its 32-bit and legacy-uname forms).
_PERSONALITIES = (0x0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF)

_GROUPS: dict[str, str] = {
    "files": """
        read write open openat openat2 close close_range creat stat fstat lstat newfstatat statx
        statfs fstatfs lseek pread64 pwrite64 readv writev preadv pwritev preadv2 pwritev2
        access faccessat faccessat2 dup dup2 dup3 pipe pipe2 fcntl flock fsync fdatasync sync
        syncfs sync_file_range truncate ftruncate fallocate fadvise64 readahead getdents
        getdents64 getcwd chdir fchdir rename renameat renameat2 mkdir mkdirat rmdir link linkat
        unlink unlinkat symlink symlinkat readlink readlinkat chmod fchmod fchmodat fchmodat2
        chown fchown lchown fchownat umask utime utimes utimensat futimesat mknod mknodat
        copy_file_range sendfile splice tee vmsplice ioctl memfd_create memfd_secret
        setxattr lsetxattr fsetxattr getxattr lgetxattr fgetxattr listxattr llistxattr
        flistxattr removexattr lremovexattr fremovexattr setxattrat getxattrat listxattrat
        removexattrat inotify_init inotify_init1 inotify_add_watch inotify_rm_watch
        fanotify_mark cachestat
    """,
    "aio and events": """
        io_setup io_destroy io_getevents io_pgetevents io_submit io_cancel poll ppoll select
        pselect6 epoll_create epoll_create1 epoll_ctl epoll_wait epoll_pwait epoll_pwait2
        eventfd eventfd2 signalfd signalfd4 timerfd_create timerfd_settime timerfd_gettime
    """,
    "memory": """
        mmap mprotect munmap mremap msync mincore madvise brk remap_file_pages mlock mlock2
        munlock mlockall munlockall membarrier pkey_mprotect pkey_alloc pkey_free mseal
        map_shadow_stack
    """,
    "sockets (no network exists: Docker's none, or the box's own loopback)": """
        socketpair connect accept accept4 bind listen getsockname getpeername setsockopt
        getsockopt sendto recvfrom sendmsg recvmsg sendmmsg recvmmsg shutdown
    """,
    "processes and threads": """
        fork vfork execve execveat exit exit_group wait4 waitid kill tkill tgkill getpid
        gettid getppid getpgid setpgid getpgrp getsid setsid prctl arch_prctl set_tid_address
        set_robust_list get_robust_list rseq restart_syscall pidfd_open pidfd_send_signal
        set_thread_area get_thread_area seccomp futex futex_waitv futex_wake futex_wait
        futex_requeue process_mrelease
    """,
    "signals and time": """
        rt_sigaction rt_sigprocmask rt_sigreturn rt_sigpending rt_sigtimedwait rt_sigqueueinfo
        rt_sigsuspend rt_tgsigqueueinfo sigaltstack pause alarm getitimer setitimer nanosleep
        clock_nanosleep clock_gettime clock_getres gettimeofday time times timer_create
        timer_settime timer_gettime timer_getoverrun timer_delete
    """,
    "identity (the runner drops each candidate to its own uid; capabilities decide the rest)": """
        getuid geteuid getgid getegid getgroups setgroups setuid setgid setreuid setregid
        setresuid getresuid setresgid getresgid setfsuid setfsgid capget capset
    """,
    "limits and scheduling": """
        getrlimit setrlimit prlimit64 getrusage sysinfo uname getpriority setpriority
        sched_setparam sched_getparam sched_setscheduler sched_getscheduler
        sched_get_priority_max sched_get_priority_min sched_rr_get_interval sched_yield
        sched_setaffinity sched_getaffinity sched_setattr sched_getattr getcpu ioprio_set
        ioprio_get getrandom landlock_create_ruleset landlock_add_rule landlock_restrict_self
    """,
    "IPC (private to the container, and to each box)": """
        shmget shmat shmctl shmdt semget semop semctl semtimedop msgget msgsnd msgrcv msgctl
        mq_open mq_unlink mq_timedsend mq_timedreceive mq_notify mq_getsetattr
    """,
    "box building (trusted runner only: each candidate's own filter refuses it)": """
        mount
    """,
}
#: Allowed without conditions.
ALLOWED: frozenset[str] = frozenset(name for group in _GROUPS.values() for name in group.split())
#: Refused for everyone in the container (not exhaustive: anything not allowed is refused).
DENIED: frozenset[str] = frozenset(
    """
    acct add_key keyctl request_key bpf perf_event_open userfaultfd ptrace process_vm_readv
    process_vm_writev process_madvise kcmp pidfd_getfd io_uring_setup io_uring_enter
    io_uring_register kexec_load kexec_file_load init_module finit_module delete_module
    create_module query_module get_kernel_syms reboot swapon swapoff sysfs _sysctl uselib ustat
    nfsservctl vhangup syslog iopl ioperm modify_ldt settimeofday clock_settime clock_adjtime
    adjtimex setns pivot_root chroot umount2 open_tree move_mount fsopen fsconfig fsmount fspick
    mount_setattr sethostname setdomainname name_to_handle_at open_by_handle_at quotactl
    quotactl_fd lookup_dcookie fanotify_init get_mempolicy set_mempolicy mbind migrate_pages
    move_pages set_mempolicy_home_node vm86 vm86old
    """.split()
)

_ARCHES = {
    "x86_64": ["SCMP_ARCH_X86_64"],
    "amd64": ["SCMP_ARCH_X86_64"],
    "aarch64": ["SCMP_ARCH_AARCH64"],
    "arm64": ["SCMP_ARCH_AARCH64"],
}


def profile(arch: str = "x86_64") -> dict[str, Any]:
    """The profile as Docker's ``--security-opt seccomp=…`` takes it (native calls only:
    32-bit and x32 calls are refused)."""
    arches = _ARCHES.get(arch.lower())
    if arches is None:
        raise ValueError(f"no sandbox seccomp profile for architecture {arch!r}")
    rules: list[dict[str, Any]] = [
        {"names": sorted(ALLOWED), "action": "SCMP_ACT_ALLOW"},
        {
            "names": ["clone"],
            "action": "SCMP_ACT_ALLOW",
            "args": [{"index": 0, "value": _CLONE_NS, "valueTwo": 0, "op": "SCMP_CMP_MASKED_EQ"}],
        },
        # clone3 passes its flags in memory, out of a filter's reach: C libraries fall back to
        # clone when it is missing.
        {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38},
        {
            "names": ["unshare"],
            "action": "SCMP_ACT_ALLOW",
            "args": [{"index": 0, "value": BOX_FLAGS, "valueTwo": 0, "op": "SCMP_CMP_EQ"}],
        },
        {
            "names": ["socket"],
            "action": "SCMP_ACT_ALLOW",
            "args": [{"index": 0, "value": _AF_VSOCK, "valueTwo": 0, "op": "SCMP_CMP_NE"}],
        },
    ]
    rules += [
        {
            "names": ["personality"],
            "action": "SCMP_ACT_ALLOW",
            "args": [{"index": 0, "value": value, "valueTwo": 0, "op": "SCMP_CMP_EQ"}],
        }
        for value in _PERSONALITIES
    ]
    return {
        "defaultAction": "SCMP_ACT_ERRNO",
        "defaultErrnoRet": 1,
        "architectures": arches,
        "syscalls": rules,
    }


def profile_json(arch: str = "x86_64") -> str:
    """:func:`profile` as compact JSON, the value of ``security_opt=["seccomp=<json>"]``."""
    return json.dumps(profile(arch), separators=(",", ":"), sort_keys=True)
