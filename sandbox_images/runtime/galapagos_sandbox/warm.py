"""A warm interpreter for a compat evaluator's ``[sys.executable, script]`` subprocess.

Many OpenEvolve/SkyDiscover evaluators run the candidate program as
``subprocess.Popen([sys.executable, script, ...])``; in a sandbox that fresh interpreter spends
≈90 ms of a ≈100 ms evaluation importing numpy again.  In a compat box (never a sealed one: the
runner sets ``RunnerConfig.warm_python`` only for compat jobs whose evaluator names
``sys.executable``) the candidate process forks one *warm interpreter* before its job arrives:
a copy of itself, with the zygote's preloaded modules, that closes every descriptor it
inherited and waits on a socket.  When the evaluator's first such ``Popen`` comes, the warm
interpreter receives the child's stdin/stdout/stderr, argv, working directory and
environment, becomes the program (its ``__main__``, with the ``sys.path``, ``sys.argv``,
streams, exit status and traceback a fresh interpreter would give)
and the ``Popen`` object gets its pid: it is a real child of the evaluator, so ``wait``,
``communicate(timeout=…)`` and ``kill`` work unchanged.

Why it is no weaker: the warm interpreter lives in the candidate's own box, forked by the
candidate's own process (the compat evaluator already runs there, as the candidate's uid, with
the candidate's filter), before the job arrived, so it never held task data; it dies with the
box like every other process in it; it serves one ``Popen`` (later ones, and any call this
cannot reproduce exactly, run a real interpreter: among them any made after the evaluator's
process changed what a child inherits, its umask, resource limits, signal mask, credentials,
seccomp filters or CPU set, see ``_inherited``).  What a program can tell apart: modules the
zygote preloaded are already in ``sys.modules``; ``sys.flags`` are the sandbox's (``-P -s -S``,
then ``site`` run by hand); the string hash seed is the candidate process's.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["start"]

#: Environment variables that change how an interpreter starts: a ``Popen`` that sets one of
#: them otherwise than the candidate process started with runs a real interpreter, except
#: these two, which the warm interpreter applies itself.
_STARTUP_PREFIX = ("PYTHON", "LC_", "OMP_", "OPENBLAS_", "MKL_", "NUMEXPR_", "LANG", "TZ")
_APPLIED = frozenset({"PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE"})

#: The lines of ``/proc/thread-self/status`` a child inherits through ``fork`` and ``exec``:
#: the warm interpreter has them as they were when it was forked, a real child as they are at
#: the call, so a call made after the evaluator's process changed one runs a real interpreter.
_INHERITED = frozenset(
    {
        "Umask", "Uid", "Gid", "Groups", "NoNewPrivs", "Seccomp", "Seccomp_filters",
        "SigBlk", "SigIgn", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb",
        "Cpus_allowed_list", "Mems_allowed_list",
    }
)  # fmt: skip

_state: dict[str, Any] = {}


def start() -> None:
    """Fork the warm interpreter and route the first fitting ``Popen`` to it (pre-job)."""
    import socket
    import subprocess
    import threading

    if _state:
        return
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001, S110 - nothing to flush
            pass
    env = dict(os.environ)
    inherited = _inherited()
    if inherited is None:
        return  # no /proc to compare the process with later: every call runs for real
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the warm interpreter
        try:
            ours.close()
            _idle(theirs, env)
        finally:
            os._exit(70)
    theirs.close()
    ours.set_inheritable(False)
    original = subprocess.Popen._execute_child
    _state.update(
        pid=pid,
        sock=ours,
        env=env,
        inherited=inherited,
        original=original,
        lock=threading.Lock(),
    )
    # A process forked from this one (multiprocessing) must not use it: not its child.
    os.register_at_fork(after_in_child=_forget)

    def _execute_child(self: Any, *call: Any, **named: Any) -> None:
        if named or not _hand_over(self, call):
            original(self, *call, **named)

    subprocess.Popen._execute_child = _execute_child  # type: ignore[method-assign]


def _forget() -> None:
    _state["sock"] = None


def _inherited() -> tuple[Any, ...] | None:
    """What a child of the calling thread inherits besides its descriptors, environment and
    directory (umask, credentials, capabilities, seccomp, signal mask and ignored signals, CPU
    and memory nodes, resource limits, priority, OOM score); None without ``/proc``."""
    import resource
    import signal

    try:  # anything odd (no /proc, a field that does not parse): None, which never matches
        with open("/proc/thread-self/status") as f:
            lines = f.read().splitlines()
        with open("/proc/self/oom_score_adj") as f:
            oom = f.read().strip()
        priority = os.getpriority(os.PRIO_PROCESS, 0)
        fields = {}
        for line in lines:
            key, _, value = line.partition(":")
            if key in _INHERITED:
                fields[key] = value.strip()
        if "SigIgn" in fields:  # every interpreter ignores these two itself (restore_signals)
            reset = (1 << (signal.SIGPIPE - 1)) | (1 << (signal.SIGXFSZ - 1))
            fields["SigIgn"] = str(int(fields["SigIgn"], 16) & ~reset)
        limits = tuple(
            resource.getrlimit(getattr(resource, name))
            for name in sorted(dir(resource))
            if name.startswith("RLIMIT_")
        )
    except Exception:  # noqa: BLE001 - the caller then runs a real interpreter
        return None
    return tuple(sorted(fields.items())), limits, priority, oom


def _fits(call: tuple[Any, ...]) -> str | None:
    """The script a fresh interpreter would run for this ``_execute_child`` call, or None when
    it is anything but ``[sys.executable, script, *args]`` with default process settings."""
    if len(call) != 23:  # the signature this module knows (CPython 3.11)
        return None
    args, executable, preexec_fn, close_fds, pass_fds, cwd, env, *rest = call
    shell, restore_signals, gid, gids, uid = rest[2], rest[9], rest[10], rest[11], rest[12]
    umask, start_new_session, process_group = rest[13:16]
    if umask != -1 or start_new_session or process_group != -1:
        return None
    if not isinstance(args, list | tuple) or len(args) < 2 or shell or preexec_fn is not None:
        return None
    if not all(type(a) is str for a in args) or args[0] != sys.executable:
        return None
    if executable not in (None, sys.executable) or not close_fds or pass_fds:
        return None
    if not restore_signals or gid is not None or gids is not None or uid is not None:
        return None
    script = args[1]
    if script.startswith("-") or not script:
        return None
    if cwd is not None and not isinstance(cwd, str):
        return None
    full = os.path.join(cwd or os.getcwd(), script)
    if not os.path.isfile(full):
        return None
    target = os.environ if env is None else env
    try:
        if not all(type(k) is str and type(v) is str for k, v in target.items()):
            return None
        for key in set(target) | set(_state["env"]):
            if not str(key).startswith(_STARTUP_PREFIX) or key in _APPLIED:
                continue
            if target.get(key) != _state["env"].get(key):
                return None
    except Exception:  # noqa: BLE001 - an odd mapping: let the real Popen judge it
        return None
    now = _inherited()
    if now is None or now != _state["inherited"]:
        return None  # the process changed since the fork: a real child would inherit that
    return script


def _hand_over(popen: Any, call: tuple[Any, ...]) -> bool:
    """Give the call to the warm interpreter; False when it cannot take it (run it for real)."""
    import marshal
    import socket

    lock = _state.get("lock")
    if lock is None or not lock.acquire(blocking=False):
        return False  # another thread is handing its call over: this one runs for real
    try:
        sock = _state.get("sock")
        if sock is None or _fits(call) is None:
            return False
        _state["sock"] = None  # one call only, whatever happens next
    finally:
        lock.release()
    args, cwd, env = call[0], call[5], call[6]
    p2cread, p2cwrite, c2pread, c2pwrite, errread, errwrite = call[10:16]
    target = dict(os.environ if env is None else env)  # all str: _fits checked
    # The directory the child starts in, as the evaluator's process sees it now (the warm
    # interpreter's own is the one it was forked in).
    where = os.path.join(os.getcwd(), cwd) if cwd is not None else os.getcwd()
    payload = marshal.dumps(([str(a) for a in args], where, target))
    fds = [
        p2cread if p2cread != -1 else 0,
        c2pwrite if c2pwrite != -1 else 1,
        errwrite if errwrite != -1 else 2,
    ]
    try:
        socket.send_fds(sock, [len(payload).to_bytes(8, "little")], fds, socket.MSG_NOSIGNAL)
        sock.sendall(payload, socket.MSG_NOSIGNAL)
        answer = sock.recv(64)
    except TimeoutError:  # an evaluator's own alarm (OSError's subclass): its, not ours
        _reap(_state["pid"])
        raise
    except OSError:
        answer = b""
    except BaseException:
        _reap(_state["pid"])
        raise
    finally:
        sock.close()
    if not answer.startswith(b"ok"):
        if answer.startswith(b"cwd "):  # what the real Popen raises for a missing directory
            errno_ = int(answer[4:])
            _reap(_state["pid"])
            raise OSError(errno_, os.strerror(errno_), cwd)
        _reap(_state["pid"])
        return False  # the warm interpreter is gone: a real one runs the call
    popen.pid = _state["pid"]
    popen._child_created = True
    popen._close_pipe_fds(p2cread, p2cwrite, c2pread, c2pwrite, errread, errwrite)
    return True


def _reap(pid: int) -> None:
    try:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    except OSError:
        pass


# -- the warm interpreter's side -------------------------------------------------------------


def _idle(sock: Any, env: dict[str, str]) -> None:  # pragma: no cover - the warm interpreter
    """Drop every inherited descriptor, then wait for the one call (or the parent's end)."""
    import marshal
    import socket

    keep = sock.fileno()
    # The old stream objects stay referenced: freeing one must never close a descriptor that
    # by then means something else.
    _state["kept"] = (sys.stdin, sys.stdout, sys.stderr)
    r, w = os.pipe()  # placeholders: nothing of the candidate's stdio stays open here
    os.dup2(r, 0)
    os.dup2(w, 1)
    os.dup2(w, 2)
    os.closerange(3, keep)
    os.closerange(keep + 1, max(os.sysconf("SC_OPEN_MAX"), 1 << 16))
    _prepare()
    try:
        head, fds, _flags, _addr = socket.recv_fds(sock, 8, 3)
    except OSError:
        os._exit(0)
    if len(head) != 8 or len(fds) != 3:
        os._exit(0)  # the parent ended (or sent nonsense): nothing to run
    size = int.from_bytes(head, "little")
    chunks, got = [], 0
    while got < size:
        part = sock.recv(min(size - got, 1 << 20))
        if not part:
            os._exit(0)
        chunks.append(part)
        got += len(part)
    argv, cwd, target_env = marshal.loads(b"".join(chunks))
    for i, fd in enumerate(fds):
        os.dup2(fd, i)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    try:
        os.chdir(cwd)
    except OSError as exc:
        sock.sendall(f"cwd {exc.errno}".encode())
        os._exit(0)
    sock.sendall(b"ok")
    sock.close()
    _run(argv, target_env)


def _prepare() -> None:  # pragma: no cover - the warm interpreter
    """What a fresh interpreter does before ``__main__``, done while idle: ``site``'s paths,
    builtins and ``sitecustomize``, with the original ``Popen`` back for the program."""
    import subprocess

    original = _state.get("original")
    if original is not None:
        subprocess.Popen._execute_child = original  # type: ignore[method-assign]
    kept = _state.get("kept")
    _state.clear()
    _state["kept"] = kept
    pythonpath = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    stdlib = [p for p in sys.path if p not in pythonpath and p]
    sys.path[:] = [*(os.path.abspath(p) for p in pythonpath), *stdlib]
    import site

    try:
        site.main()
    except Exception:  # noqa: BLE001, S110 - as a fresh interpreter would, carry on without
        pass


def _run(argv: list[str], env: dict[str, str]) -> None:  # pragma: no cover - warm interpreter
    """Become ``python3 script args…`` and exit as it would."""
    import importlib.machinery
    import io
    import types

    os.environ.clear()
    os.environ.update(env)
    # ``python3 script.py`` names its ``__main__`` by the absolute path (Python 3.9+).
    script = os.path.abspath(argv[1])
    sys.argv = argv[1:]
    sys.orig_argv = list(argv)
    sys.path.insert(0, os.path.dirname(script))
    sys.dont_write_bytecode = bool(env.get("PYTHONDONTWRITEBYTECODE"))
    unbuffered = bool(env.get("PYTHONUNBUFFERED"))
    # The encodings the candidate's interpreter chose at its start (locale, PYTHONIOENCODING,
    # PYTHONUTF8: all as this call's, or it would not be here).
    old_in, old_out, _old_err = _state["kept"]
    sys.stdin = sys.__stdin__ = io.TextIOWrapper(
        io.BufferedReader(io.FileIO(0, "r", closefd=False)),
        encoding=old_in.encoding,
        errors=old_in.errors,
    )
    sys.stdout = sys.__stdout__ = io.TextIOWrapper(
        _writer(1, unbuffered),
        encoding=old_out.encoding,
        errors=old_out.errors,
        line_buffering=os.isatty(1),
        write_through=unbuffered,
    )
    sys.stderr = sys.__stderr__ = io.TextIOWrapper(
        _writer(2, unbuffered),
        encoding=old_out.encoding,
        errors="backslashreplace",
        line_buffering=True,
        write_through=unbuffered,
    )
    from galapagos_sandbox.worker import fresh_randomness

    fresh_randomness()
    code = 0
    interrupted = False
    try:
        with open(script, "rb") as f:
            source = f.read()
        main = types.ModuleType("__main__")
        main.__file__ = script
        main.__cached__ = None
        main.__loader__ = importlib.machinery.SourceFileLoader("__main__", script)
        sys.modules["__main__"] = main
        _state["main"] = main
        # dont_inherit: not this module's ``from __future__ import annotations``.
        code_ = compile(source, script, "exec", dont_inherit=True)
        exec(code_, main.__dict__)  # noqa: S102 - the program
    except SystemExit as exc:
        code = _exit_status(exc.code)
    except BaseException as exc:  # noqa: BLE001 - printed as the interpreter would
        # Without our own frames, as the interpreter prints it (none at all for a program that
        # does not compile).
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != script:
            tb = tb.tb_next
        try:
            sys.excepthook(type(exc), exc, exc.with_traceback(tb).__traceback__)
        except Exception:  # noqa: BLE001, S110 - a broken hook: the status still says it
            pass
        code = 1
        interrupted = isinstance(exc, KeyboardInterrupt)
    code = _shut_down(code)
    if interrupted:  # as the interpreter ends on Ctrl-C: killed by SIGINT
        import signal

        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(code)


def _writer(fd: int, unbuffered: bool) -> Any:  # pragma: no cover - the warm interpreter
    import io

    raw = io.FileIO(fd, "w", closefd=False)
    return raw if unbuffered else io.BufferedWriter(raw)


def _exit_status(value: Any) -> int:  # pragma: no cover - the warm interpreter
    if value is None:
        return 0
    if isinstance(value, int):
        return value & 0xFF
    try:
        print(value, file=sys.stderr)
    except Exception:  # noqa: BLE001, S110 - an unprintable exit value
        pass
    return 1


def _shut_down(code: int) -> int:  # pragma: no cover - the warm interpreter
    """Join non-daemon threads, run ``atexit``, free ``__main__``'s objects (a file the
    program never closed is flushed), flush: the interpreter's own exit."""
    try:
        threading = sys.modules.get("threading")
        if threading is not None:
            threading._shutdown()  # type: ignore[attr-defined]
        import atexit

        atexit._run_exitfuncs()
    except SystemExit as exc:
        code = _exit_status(exc.code)
    except BaseException:  # noqa: BLE001, S110 - the interpreter prints and carries on
        pass
    try:
        import gc

        main = _state.pop("main", None)
        if main is not None:
            main.__dict__.clear()
        gc.collect()
    except BaseException:  # noqa: BLE001, S110 - a failing __del__ is printed and ignored
        pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001, S110 - a closed pipe
            pass
    return code
