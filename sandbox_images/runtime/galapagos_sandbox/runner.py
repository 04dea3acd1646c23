"""The trusted runner: one job per process, result as one frame on stdout.

Start-up (before any job exists): import the preload modules, fork the confined candidate
process, optionally install the sealed task (a ``task`` frame on stdin: files, environment,
evaluator import; warm pools use it so a job carries only the candidate), write a ``ready``
frame.  Then read exactly one ``job`` frame from stdin, run it, write exactly one ``result``
frame, kill every candidate process and exit (in a container: freeze them, wait for the host
to hang up, and leave them to die with the container).

A watchdog writes a ``timeout`` result if the job outlives its budget, so a hung evaluator
still yields a reason: a ``SIGALRM`` interval timer armed when the job arrives (a thread woken
at that moment would cost the job a GIL hand-off).  An evaluator that takes over ``SIGALRM``
for itself loses only this early answer; the host's deadline still holds.

Sealed jobs: the task files go to a root-only directory, the evaluator is imported here and
called with a :class:`~galapagos_sandbox.candidate.Candidate`.  Compat jobs: the whole
evaluator runs in the candidate process (see :mod:`galapagos_sandbox.worker`).

Usage: ``python3 -P -s -m galapagos_sandbox.runner '<RunnerConfig JSON>'``.
"""

from __future__ import annotations

# The C half of ``signal``: the module itself builds enums, which cost every container
# milliseconds of start-up CPU.
import _signal as signal
import gc
import os
import sys
import time
import types

from galapagos_sandbox.candidate import Candidate, CandidateProcess
from galapagos_sandbox.config import RunnerConfig
from galapagos_sandbox.confine import stop_all_candidates
from galapagos_sandbox.errors import CandidateError
from galapagos_sandbox.result import EvaluationResult
from galapagos_sandbox.schema import ResultError, clean_text, normalize_result, tail
from galapagos_sandbox.wire import WireError, encode_frame, read_frame, write_all
from galapagos_sandbox.worker import install_site_builtins

# typing costs milliseconds of container start-up; annotations are strings anyway.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["main"]

#: Seconds the evaluator gets past the budget to handle a CandidateTimeout before the watchdog.
WATCHDOG_GRACE_S = 0.25
#: Longest a finished runner in a container waits for the host to hang up (see ``_linger``).
LINGER_S = 30.0
#: Job endings after which a zygote container may serve another candidate; anything else (a
#: timeout, an OOM kill, output over the cap, an infrastructure error) retires it.
REUSABLE = frozenset({"ok", "invalid", "crash"})
#: Exit status of a zygote's runner that asks it to retire the container.
RETIRE = 3
#: Exit status of a zygote's runner that found the host gone (its stdin ended).
HUNG_UP = 5
_TB_CHARS = 4000


def _format_exc() -> str:
    import traceback  # only on the failure path: it is slow to import

    return traceback.format_exc()


class Runner:
    def __init__(self, cfg: RunnerConfig) -> None:
        self.cfg = cfg
        self.process = CandidateProcess(cfg)
        self.started = time.monotonic()
        self._emitted = False
        #: Seconds since job receipt at each phase (reported, for benchmarks and debugging).
        self.timings: dict[str, float] = {}
        self._budget = cfg.wall_s
        #: The sealed task installed at start-up (``preload_task``): its digest, then either
        #: the evaluator module or the result document its import failed with.
        self._task_digest: str | None = None
        self._task: types.ModuleType | None = None
        self._task_error: dict[str, Any] | None = None
        self._importing = False
        #: Problems importing the preload modules (reported in the ready frame).
        self.preload_errors: list[str] = []

    # -- output ------------------------------------------------------------------------------

    def _mark(self, phase: str) -> None:
        self.timings[phase] = round(time.monotonic() - self.started, 6)

    def emit(self, doc: dict[str, Any]) -> bool:
        """Write the one result frame; later calls are ignored (returns False).

        Only the main thread emits (the watchdog is a signal handler running there), and the
        watchdog is disarmed before any emit, so this never runs twice at once.
        """
        if self._emitted:
            return False
        self._emitted = True
        cap = self.process.capture
        cap.settle()
        doc.update(
            kind="result",
            duration_s=round(time.monotonic() - self.started, 6),
            calls=self.process.calls,
            spawns=self.process.spawns,
            output_bytes=cap.total,
            stdout_tail=cap.text("stdout"),
            stderr_tail=cap.text("stderr"),
            timings=self.timings,
        )
        frame = encode_frame(doc)
        if len(frame) > self.cfg.output_bytes:
            doc["artifacts"] = {"artifacts_truncated": "true"}
            doc["stdout_tail"] = tail(doc["stdout_tail"], 1024)
            doc["stderr_tail"] = tail(doc["stderr_tail"], 1024)
            frame = encode_frame(doc)
            if len(frame) > self.cfg.output_bytes:
                frame = encode_frame(
                    {
                        "kind": "result",
                        "status": "output_limit",
                        "error": "the result exceeds the output cap",
                    }
                )
        write_all(1, frame)
        return True

    def finish(self, doc: dict[str, Any]) -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)  # no watchdog inside emit (see there)
        self.emit(doc)
        if self.cfg.box:
            self._close_box(doc)
        # In a container, freeze the candidates (cheap) and let them die with it: killing them
        # here would spend their teardown while the host is reading the result.
        if stop_all_candidates(self.cfg):
            _linger(LINGER_S)
            os._exit(0)
        self.process.shutdown()
        os._exit(0)

    def _close_box(self, doc: dict[str, Any]) -> None:
        """Zygote containers: empty the box, remove the task files, and tell the zygote
        (exit status) whether the container may serve another candidate (never returns)."""
        self.process.shutdown()
        clean = self.process.reaped() and doc.get("status") in REUSABLE
        try:
            _remove_tree(os.path.join(self.cfg.trusted_dir, "task"))
        except OSError:
            clean = False
        os._exit(0 if clean else RETIRE)

    def _watchdog(self, _signum: int, _frame: object) -> None:
        """SIGALRM handler (main thread; never returns): the job outlived its budget and
        grace, or, before ``ready``, the task's evaluator outlived it while importing."""
        if self._importing:
            # Leave the import where it hangs (nothing is unwound through evaluator code):
            # say ready and answer the job with the timeout, as if it had happened during it.
            self._importing = False
            self._task_error = {
                "status": "timeout",
                "error": f"importing the evaluator exceeded the {self.cfg.wall_s:g} s budget",
            }
            self.say_ready()
            self.run()
        self.finish(
            {"status": "timeout", "error": f"the evaluation exceeded its {self._budget:g} s budget"}
        )

    # -- jobs --------------------------------------------------------------------------------

    @staticmethod
    def _write_files(
        header: dict[str, Any], blob: bytearray, root: str, skip: str = ""
    ) -> bytes | None:
        """Write the task files under ``root``; return the bytes of ``skip`` instead of
        writing it (the evaluator module is executed from memory: one file less to create)."""
        kept = None
        for name, offset, size in header.get("files", []):
            norm = os.path.normpath(name)
            if os.path.isabs(norm) or norm.startswith(".."):
                raise ValueError(f"task file name {name!r} leaves the task directory")
            if norm == skip:
                kept = bytes(blob[offset : offset + size])
                continue
            target = os.path.join(root, norm)
            os.makedirs(os.path.dirname(target), mode=0o700, exist_ok=True)
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(blob[offset : offset + size])
        return kept

    @staticmethod
    def _load_module(name: str, path: str, source: bytes | None = None) -> types.ModuleType:
        """Import the evaluator from its file or bytes (straight, without a sys.path search)."""
        if source is None:
            with open(path, "rb") as f:
                source = f.read()
        module = types.ModuleType(name)
        module.__file__ = path
        sys.modules[name] = module
        # dont_inherit: not this module's ``from __future__ import annotations`` (the
        # evaluator runs as ``python3`` would import it).
        code = compile(source, path, "exec", dont_inherit=True)
        exec(code, module.__dict__)  # noqa: S102 - trusted evaluator
        return module

    def rehearse(self) -> None:
        """Pay the job path's first-time costs (parser start-up, fresh pages) before ``ready``."""
        rehearse(self.cfg)

    def _install_task(self, header: dict[str, Any], blob: bytearray) -> types.ModuleType:
        """Write the task files, set the evaluator's environment, import the evaluator."""
        taskdir = os.path.join(self.cfg.trusted_dir, "task")
        name = str(header.get("evaluator_module", "evaluator"))
        if len(header.get("files", [])) > 1:
            os.makedirs(taskdir, mode=0o700, exist_ok=True)
        source = self._write_files(header, blob, taskdir, skip=f"{name}.py")
        self._mark("files")
        os.environ.update({str(k): str(v) for k, v in (header.get("env") or {}).items()})
        sys.path.insert(0, taskdir)  # for the evaluator's own helper modules
        module = self._load_module(name, os.path.join(taskdir, f"{name}.py"), source)
        self._mark("evaluator")
        return module

    def preload_task(self, frame: tuple[dict[str, Any], bytearray] | None) -> None:
        """Install the sealed task before ``ready`` (after the candidate process was forked,
        so it never holds the evaluator).  An import that fails or outlives the budget (see
        ``_watchdog``) becomes the job's result, as if it had happened during the job."""
        if frame is None or frame[0].get("kind") != "task":
            raise WireError("expected a task frame before the job")
        header, blob = frame
        self._task_digest = str(header.get("digest"))
        self._importing = True
        signal.setitimer(signal.ITIMER_REAL, self.cfg.wall_s)
        try:
            self._task = self._install_task(header, blob)
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - a broken evaluator is data
            self._task_error = _crash(exc)
        finally:
            # Disarm first: an alarm due until here still counts as an import timeout.
            signal.setitimer(signal.ITIMER_REAL, 0)
            self._importing = False

    def say_ready(self) -> None:
        write_all(1, encode_frame({"kind": "ready", "preload_errors": self.preload_errors}))

    def _sealed(self, header: dict[str, Any], blob: bytearray) -> dict[str, Any]:
        name = str(header.get("evaluator_module", "evaluator"))
        if self._task_digest is None:
            module = self._install_task(header, blob)
        elif header.get("task_digest") != self._task_digest:
            return {"status": "error", "error": "the job is for another task than this sandbox's"}
        elif self._task is None:
            return dict(self._task_error or {"status": "error", "error": "no task installed"})
        else:
            module = self._task
        func = getattr(module, str(header.get("function")), None)
        if func is None:
            return {
                "status": "error",
                "error": f"the evaluator {name}.py has no function {header.get('function')!r}",
            }
        value = func(Candidate(self.process))
        self._mark("evaluate")
        return self._result(value)

    def _compat(self, header: dict[str, Any], blob: bytearray) -> dict[str, Any]:
        request = {
            "op": "compat",
            "function": header.get("function"),
            "module": header.get("evaluator_module", "evaluator"),
            "program": header.get("candidate", ""),
            "program_filename": header.get("candidate_filename", "program.py"),
            "files": header.get("files", []),
            "env": header.get("env") or {},
        }
        answer = self.process.compat(request, bytes(blob))
        if not (
            isinstance(answer, dict)
            and isinstance(answer.get("metrics"), dict)
            and isinstance(answer.get("artifacts"), dict)
        ):
            raise ResultError("the compat evaluator's answer is not metrics plus artifacts")
        return self._result(EvaluationResult(answer["metrics"], answer["artifacts"]))

    def _result(self, value: Any) -> dict[str, Any]:
        metrics, artifacts = normalize_result(value)
        validity = metrics.get("validity")
        status = "invalid" if type(validity) is not str and validity in (0, -1) else "ok"
        return {"status": status, "metrics": metrics, "artifacts": artifacts}

    def run(self) -> None:
        frame = None
        try:
            frame = read_frame(0, max_frame=self.cfg.max_job_bytes)
        except WireError as exc:
            self.finish({"status": "error", "error": f"malformed job frame: {exc}"})
        if frame is None:  # the host went away before sending a job (pool shutdown)
            self.process.shutdown()
            os._exit(HUNG_UP if self.cfg.box else 0)
        header, blob = frame
        self.started = time.monotonic()
        self.timings = {}
        self._budget = float(header.get("wall_s") or self.cfg.wall_s)
        self.process.deadline = self.started + self._budget
        signal.setitimer(signal.ITIMER_REAL, self._budget + WATCHDOG_GRACE_S)
        self.process.source = str(header.get("candidate", ""))
        self.process.filename = os.path.basename(str(header.get("candidate_filename")))
        if header.get("mode") != "compat" and self._task is None:
            self.process.send_source()  # the child compiles it while we import the evaluator
        try:
            if header.get("mode") == "compat":
                doc = self._compat(header, blob)
            else:
                doc = self._sealed(header, blob)
        except CandidateError as exc:
            doc = {
                "status": exc.status,
                "error": clean_text(exc.message),
                "traceback": clean_text(exc.traceback),
                "exit_code": getattr(exc, "exit_code", None),
            }
        except ResultError as exc:
            doc = {"status": "invalid_result", "error": str(exc)}
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - a broken evaluator is data
            doc = _crash(exc)
        self.finish(doc)


def rehearse(cfg: RunnerConfig) -> None:
    """Run the job path once on a made-up task (parser start-up, fresh pages): a zygote does it
    once before it forks its runners, a one-job runner before it says ready."""
    scratch = os.path.join(cfg.trusted_dir, "rehearsal")
    os.makedirs(scratch, mode=0o700, exist_ok=True)
    Runner._write_files(
        {"files": [["sub/evaluator.py", 0, len(_REHEARSAL)]]},
        bytearray(_REHEARSAL.encode()),
        scratch,
    )
    path = os.path.join(scratch, "sub", "evaluator.py")
    module = Runner._load_module("_galapagos_rehearsal", path)
    sys.modules.pop("_galapagos_rehearsal", None)
    normalize_result(module.evaluate(None))
    encode_frame({"kind": "result", "metrics": {"combined_score": 0.5}, "artifacts": {}})
    os.unlink(path)
    os.rmdir(os.path.dirname(path))
    os.rmdir(scratch)


def _remove_tree(root: str) -> None:
    """Remove ``root`` and everything under it (trusted files only; absent is fine)."""
    if not os.path.lexists(root):
        return
    for parent, dirs, files in os.walk(root, topdown=False):
        for name in files:
            os.unlink(os.path.join(parent, name))
        for name in dirs:
            path = os.path.join(parent, name)
            if os.path.islink(path):
                os.unlink(path)
            else:
                os.rmdir(path)
    os.rmdir(root)


def _crash(exc: BaseException) -> dict[str, Any]:
    """The result document of an evaluator that raised (call from inside the except block)."""
    return {
        "status": "crash",
        "error": clean_text(f"the evaluator raised {type(exc).__name__}: {exc}"[:2000]),
        "traceback": clean_text(_format_exc()[-_TB_CHARS:]),
    }


def _linger(limit_s: float) -> None:
    """Wait (idle, candidates stopped) until the host hangs up, at most ``limit_s``.

    A container's teardown costs the engine and the kernel a burst of CPU; exiting right after
    the result would spend it while the host is still reading that result.  The host closes the
    stream when it removes the container, off its critical path.
    """
    import select

    poller = select.poll()
    poller.register(0, select.POLLIN)
    end = time.monotonic() + limit_s
    while (left := end - time.monotonic()) > 0 and poller.poll(int(left * 1000) + 1):
        try:
            if not os.read(0, 65536):
                return
        except OSError:
            return


_REHEARSAL = """
import math
def evaluate(candidate):
    values = [math.sqrt(i) for i in range(100)]
    return {"combined_score": sum(values) / len(values), "validity": 1.0, "note": "x"}
"""


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    cfg = RunnerConfig.from_json(args[0])
    install_site_builtins()
    runner = Runner(cfg)
    for name in cfg.preload:
        try:
            __import__(name)  # importlib itself costs start-up time; this is its core
        except Exception as exc:  # noqa: BLE001 - reported in the ready frame, job still runs
            runner.preload_errors.append(f"{name}: {type(exc).__name__}: {exc}")
    # Objects that exist now are never collected: the collector would otherwise walk (and so
    # copy-on-write) every page shared with the candidate process on its first pass.
    gc.freeze()
    runner.process.spawn(fresh_interpreter=False)
    runner.process.ping()
    runner.rehearse()
    signal.signal(signal.SIGALRM, runner._watchdog)
    if cfg.task:
        runner.preload_task(read_frame(0, max_frame=cfg.max_job_bytes))
    runner.say_ready()
    runner.run()


if __name__ == "__main__":
    main()
