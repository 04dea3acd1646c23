"""The runner's side of the candidate process, and the handle trusted evaluators receive.

:class:`CandidateProcess` owns the confined child: it is forked *before* the job is read (so no
task data is ever in its memory, and preloaded modules come for free), it is replaced by a fresh
exec'd interpreter if it dies, and its stdout/stderr are drained into a capped
:class:`OutputCapture` that kills it when the cap is exceeded.  Every answer it sends is decoded
as untrusted data.

:class:`Candidate` is what ``evaluate(candidate)`` gets: ``candidate.call(name, *args,
timeout=None)``.
"""

from __future__ import annotations

import fcntl
import os
import struct
import time

# The C half of ``signal``: the module itself builds enums, which cost every container
# milliseconds of start-up CPU.
from _signal import SIGKILL, SIGXCPU

from galapagos_sandbox.capture import OutputCapture
from galapagos_sandbox.config import RunnerConfig
from galapagos_sandbox.confine import become_candidate, kill_all_candidates, oom_kill_count
from galapagos_sandbox.errors import (
    CandidateBadOutput,
    CandidateCrashed,
    CandidateError,
    CandidateOOM,
    CandidateOutputLimit,
    CandidateRaised,
    CandidateTimeout,
)
from galapagos_sandbox.schema import clean_text
from galapagos_sandbox.wire import (
    FrameReader,
    UnsupportedType,
    WireError,
    decode_value,
    encode_frame,
    encode_value,
    write_all,
)

# typing costs milliseconds of container start-up; annotations are strings anyway.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Candidate", "CandidateProcess"]

#: Largest single answer accepted from the candidate (arrays included).
MAX_ANSWER = 128 << 20


class _Child:
    def __init__(self, pid: int, req: int, resp: int) -> None:
        self.pid = pid
        self.req = req
        self.resp = resp
        self.reader = FrameReader(resp, max_frame=MAX_ANSWER)
        self.load_sent = False
        self.loaded = False
        #: Why the program failed to load in this (still live) child; every later call
        #: raises it again instead of talking to a child without a program.
        self.load_error: CandidateError | None = None
        self.status: int | None = None
        #: In a box, ``pid`` is the box's init; it reports the candidate's own wait status here.
        self.status_fd = -1


class CandidateProcess:
    """Spawns, talks to and kills the confined candidate process (trusted side)."""

    def __init__(self, cfg: RunnerConfig) -> None:
        self.cfg = cfg
        self.capture = OutputCapture(cfg.output_bytes, self.kill)
        self.deadline: float | None = None
        self.source = ""
        self.filename = "program.py"
        self.calls = 0
        self.spawns = 0
        self._child: _Child | None = None
        self._oom_before = oom_kill_count(cfg)
        #: The environment before any task set its own: all a candidate process ever gets.
        self._env = dict(os.environ)

    # -- lifecycle ---------------------------------------------------------------------------

    def spawn(self, *, fresh_interpreter: bool) -> None:
        """Fork a confined child.  Pre-job children keep our memory; later ones exec afresh."""
        if self.cfg.box:
            self._spawn_boxed(fresh_interpreter)
            return
        req_r, req_w = os.pipe()
        resp_r, resp_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        devnull = os.open(os.devnull, os.O_RDONLY)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - child
            try:
                os.environ.clear()
                os.environ.update(self._env)
                become_candidate(self.cfg, {0: devnull, 1: out_w, 2: err_w, 3: req_r, 4: resp_w})
                args = [self.cfg.python, *self.cfg.python_flags, "-m", "galapagos_sandbox.worker"]
                if fresh_interpreter:
                    os.execv(self.cfg.python, [*args, self.cfg.compat_path])
                from galapagos_sandbox.worker import serve

                serve(self.cfg.compat_path, warm_python=self.cfg.warm_python)
            finally:
                os._exit(70)
        for fd in (req_r, resp_w, out_w, err_w, devnull):
            os.close(fd)
        flags = fcntl.fcntl(req_w, fcntl.F_GETFL)
        fcntl.fcntl(req_w, fcntl.F_SETFL, flags | os.O_NONBLOCK)
        self.capture.watch(out_r, "stdout")
        self.capture.watch(err_r, "stderr")
        self._child = _Child(pid, req_w, resp_r)
        self.spawns += 1

    def _spawn_boxed(self, fresh_interpreter: bool) -> None:
        """Build a box (:mod:`galapagos_sandbox.box`) whose init runs the candidate process.

        The builder (a child of ours, root until it drops to the candidate uid) enters the
        namespaces, lays out the fds, gives up its capabilities, installs the candidate filter
        and forks the box's init; it reports the init's pid and exits.  We are the init's
        subreaper (the zygote set that up), so the init becomes our child: killing it empties
        the box, and it reports the candidate's own exit status on ``status_fd``.
        Raises :class:`~galapagos_sandbox.box.BoxError` if the box cannot be built.
        """
        from galapagos_sandbox import box  # the zygote imported it before forking us

        req_r, req_w = os.pipe()
        resp_r, resp_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        status_r, status_w = os.pipe()
        pid_r, pid_w = os.pipe()
        devnull = os.open(os.devnull, os.O_RDONLY)
        uid = self.cfg.uid if self.cfg.uid is not None else os.getuid()
        builder = os.fork()
        if builder == 0:  # pragma: no cover - child
            try:
                os.environ.clear()
                os.environ.update(self._env)
                box.enter_box(
                    uid=uid,
                    gid=self.cfg.gid if self.cfg.gid is not None else uid,
                    tmpfs_mb=self.cfg.tmpfs_mb,
                    hide=(self.cfg.trusted_dir,),
                )
                fds = {0: devnull, 1: out_w, 2: err_w, 3: req_r, 4: resp_w, 5: status_w, 6: pid_w}
                become_candidate(self.cfg, fds)
                box.drop_capabilities()
                box.install_filter(box.candidate_filter())
                init = os.fork()
                if init == 0:
                    os.close(6)
                    box.run_init(5, close=(0, 1, 2, 3, 4))  # returns in the candidate only
                    self._serve(fresh_interpreter)
                os.write(6, struct.pack("<i", init))
                os._exit(0)
            except BaseException as exc:  # noqa: BLE001 - reported through the exit status
                try:
                    os.write(2, f"galapagos box: {type(exc).__name__}: {exc}\n".encode())
                except OSError:
                    pass
            finally:
                os._exit(70)
        for fd in (req_r, resp_w, out_w, err_w, devnull, status_w, pid_w):
            os.close(fd)
        _, status = os.waitpid(builder, 0)
        raw = os.read(pid_r, 4) if status == 0 else b""
        os.close(pid_r)
        if len(raw) != 4:
            for fd in (req_w, resp_r, out_r, err_r, status_r):
                os.close(fd)
            raise box.BoxError(0, f"could not build the candidate's box (status {status})")
        flags = fcntl.fcntl(req_w, fcntl.F_GETFL)
        fcntl.fcntl(req_w, fcntl.F_SETFL, flags | os.O_NONBLOCK)
        self.capture.watch(out_r, "stdout")
        self.capture.watch(err_r, "stderr")
        self._child = _Child(struct.unpack("<i", raw)[0], req_w, resp_r)
        self._child.status_fd = status_r
        self.spawns += 1

    def _serve(self, fresh_interpreter: bool) -> None:  # pragma: no cover - child
        """Become the candidate process (never returns)."""
        if fresh_interpreter:
            args = [self.cfg.python, *self.cfg.python_flags, "-m", "galapagos_sandbox.worker"]
            os.execv(self.cfg.python, [*args, self.cfg.compat_path])
        from galapagos_sandbox.worker import serve

        serve(self.cfg.compat_path, warm_python=self.cfg.warm_python)
        os._exit(70)

    def kill(self) -> None:
        child = self._child
        # Only an unreaped child's pid is safe to signal: a reaped one may have been reused.
        live = [child.pid] if child is not None and child.status is None else []
        kill_all_candidates(self.cfg, live)

    def shutdown(self) -> None:
        self.kill()
        if self._child is not None:
            self._reap(self._child, wait_s=1.0)

    def reaped(self) -> bool:
        """True when no candidate process of ours is left (in a box: its init was reaped, and
        the kernel reaps everything else in the box before that)."""
        return self._child is None or self._child.status is not None

    # -- calls -------------------------------------------------------------------------------

    def remaining(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.monotonic()

    def _deadline(self, timeout: float | None) -> float | None:
        ends = [d for d in (self.deadline,) if d is not None]
        if timeout is not None:
            ends.append(time.monotonic() + max(0.0, float(timeout)))
        return min(ends) if ends else None

    def ping(self) -> None:
        """One round trip before the job: the child's first wake-up costs are paid now."""
        assert self._child is not None
        self._roundtrip(self._child, {"op": "ping"}, b"", time.monotonic() + 30, "start-up")

    def send_source(self) -> bool:
        """Send the program to the live child without waiting (it compiles while we work);
        True once it is on its way (if not, the next answer read tells what happened)."""
        child = self._child
        if child is not None and child.status is None and not child.load_sent:
            header = {"op": "load", "source": self.source, "filename": self.filename}
            try:
                write_all(child.req, encode_frame(header), self._deadline(None))
                child.load_sent = True
            except (TimeoutError, BrokenPipeError):
                pass
        return child is not None and child.load_sent

    def _ready(self) -> _Child:
        """The live child (a fresh one if the last died); raises a failed load's error."""
        if self.capture.overflow:
            raise CandidateOutputLimit(self._overflow_message())
        if self._child is None or self._child.status is not None:
            self.spawn(fresh_interpreter=True)
        child = self._child
        assert child is not None
        if child.load_error is not None:
            raise child.load_error
        return child

    def call(self, name: str, args: tuple[Any, ...], timeout: float | None) -> Any:
        try:
            tree, blob = encode_value(list(args))
        except UnsupportedType as exc:
            raise TypeError(f"argument for candidate {name}() is not plain data: {exc}") from None
        deadline = self._deadline(timeout)
        child = self._ready()
        self.calls += 1
        request = encode_frame({"op": "call", "name": name, "args": tree}, blob)
        what = f"{name}()"
        if child.loaded:
            self._send(child, request, deadline, f"{what} did not read its input in time")
        else:
            # The first call travels right behind the program: the child loads it and runs
            # the call without waiting for us in between (one wake-up instead of two).
            if self.send_source():  # a child that cannot take it is still busy loading
                self._send(child, request, deadline, "loading did not finish in time")
            try:
                self._receive(child, deadline, "loading")
            except CandidateError as exc:
                if child.status is None:
                    child.load_error = exc
                raise
            child.loaded = True
        header, answer = self._receive(child, deadline, what)
        try:
            return decode_value(header.get("value"), answer)
        except (WireError, ImportError) as exc:
            raise CandidateBadOutput(f"{name}() returned malformed data: {exc}") from None

    def compat(self, header: dict[str, Any], blob: bytes) -> Any:
        if self._child is None or self._child.status is not None:
            self.spawn(fresh_interpreter=True)
        assert self._child is not None
        answer, data = self._roundtrip(
            self._child, header, blob, self._deadline(None), "the evaluator"
        )
        try:
            return decode_value(answer.get("value"), data)
        except (WireError, ImportError) as exc:
            raise CandidateBadOutput(f"the evaluator returned malformed data: {exc}") from None

    def _roundtrip(
        self, child: _Child, header: dict[str, Any], blob: bytes, deadline: float | None, what: str
    ) -> tuple[dict[str, Any], bytearray]:
        self._send(
            child, encode_frame(header, blob), deadline, f"{what} did not read its input in time"
        )
        return self._receive(child, deadline, what)

    def _send(self, child: _Child, data: bytes, deadline: float | None, late: str) -> None:
        """Write a request; past ``deadline`` the child is killed and ``late`` raised."""
        try:
            write_all(child.req, data, deadline)
        except TimeoutError:
            self.kill()
            self._reap(child, wait_s=1.0)
            raise CandidateTimeout(late) from None
        except BrokenPipeError:
            pass  # the answer pipe tells what happened

    def _receive(
        self, child: _Child, deadline: float | None, what: str
    ) -> tuple[dict[str, Any], bytearray]:
        started = time.monotonic()
        try:
            frame = child.reader.read(deadline)
        except TimeoutError:
            self.kill()
            self._reap(child, wait_s=1.0)
            spent = time.monotonic() - started
            raise CandidateTimeout(f"{what} did not finish within {spent:.3g} s") from None
        except WireError as exc:
            self.kill()
            self._reap(child, wait_s=1.0)
            raise CandidateBadOutput(f"{what} answered with a malformed frame: {exc}") from None
        if frame is None:
            raise self._death(child, what)
        answer, data = frame
        if answer.get("ok") is True:
            return answer, data
        raise self._failure(child, answer, what)

    def _failure(self, child: _Child, answer: dict[str, Any], what: str) -> CandidateError:
        kind = answer.get("kind")
        exc_type = str(answer.get("type", "Exception"))[:200]
        message = clean_text(str(answer.get("message", ""))[:2000])
        tb = clean_text(str(answer.get("traceback", ""))[:4000])
        if kind == "exited":
            self.kill()
            self._reap(child, wait_s=1.0)
            code = answer.get("code")
            return CandidateCrashed(
                f"the candidate exited (status {code}) during {what}",
                exit_code=code if type(code) is int else None,
                traceback=tb,
            )
        if kind == "bad_output":
            return CandidateBadOutput(f"{what} returned {message}")
        if exc_type == "MemoryError":
            return CandidateOOM(f"{what} ran out of memory (MemoryError)", traceback=tb)
        if kind == "raised":
            return CandidateRaised(
                f"{what} raised {exc_type}: {message}", exc_type=exc_type, traceback=tb
            )
        return CandidateBadOutput(f"{what} answered with an unknown message")

    def _reap(self, child: _Child, wait_s: float) -> None:
        """Collect the child's exit status, killing it if it lingers past ``wait_s``."""
        end = time.monotonic() + wait_s
        while child.status is None:
            pid, status = os.waitpid(child.pid, os.WNOHANG)
            if pid:
                child.status = _candidate_status(child, status)
                break
            if time.monotonic() > end:
                self.kill()
                end = time.monotonic() + 5.0
            time.sleep(0.002)
        for fd in (child.req, child.resp, child.status_fd):
            if fd < 0:
                continue
            try:
                os.close(fd)
            except OSError:
                pass
        child.req = child.resp = child.status_fd = -1

    def _overflow_message(self) -> str:
        return f"the candidate printed more than {self.cfg.output_bytes} bytes"

    def _death(self, child: _Child, what: str) -> CandidateError:
        """The child closed its answer pipe: find out why."""
        self._reap(child, wait_s=0.5)
        self.kill()  # its descendants go too
        status = child.status or 0
        if self.capture.overflow:
            return CandidateOutputLimit(self._overflow_message())
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            oom_now = oom_kill_count(self.cfg)
            if sig == SIGKILL and oom_now is not None and oom_now > (self._oom_before or 0):
                self._oom_before = oom_now
                return CandidateOOM(
                    f"the candidate was killed for exceeding memory during {what}", exit_code=-sig
                )
            if sig == SIGXCPU:
                return CandidateTimeout(f"the candidate exceeded its CPU-time limit during {what}")
            import signal  # only on this failure path (see above)

            try:
                name = signal.Signals(sig).name
            except ValueError:
                name = f"signal {sig}"
            return CandidateCrashed(
                f"the candidate was killed by {name} during {what}", exit_code=-sig
            )
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
        return CandidateCrashed(
            f"the candidate exited (status {code}) during {what}", exit_code=code
        )


def _candidate_status(child: _Child, status: int) -> int:
    """The candidate's own wait status: a box's init (``status``, now reaped) wrote it before
    it exited, unless the init itself was killed (then its status tells why)."""
    if child.status_fd < 0:
        return status
    try:
        raw = os.read(child.status_fd, 4)
    except OSError:
        raw = b""
    return struct.unpack("<i", raw)[0] if len(raw) == 4 else status


class Candidate:
    """Handle given to a sealed evaluator: the candidate program, callable only from afar."""

    def __init__(self, process: CandidateProcess) -> None:
        self._process = process

    @property
    def source(self) -> str:
        return self._process.source

    @property
    def filename(self) -> str:
        return self._process.filename

    @property
    def time_left(self) -> float | None:
        """Seconds left in the job's budget."""
        return self._process.remaining()

    def stdout_tail(self) -> str:
        return self._process.capture.text("stdout")

    def call(self, name: str, *args: Any, timeout: float | None = None) -> Any:
        """Run ``name(*args)`` in the candidate process and return its answer as plain data.

        Raises a :class:`~galapagos_sandbox.errors.CandidateError` subclass when the call times
        out, the process dies, the function raises, or the answer is not plain data.
        """
        return self._process.call(name, args, timeout)
