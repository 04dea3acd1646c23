"""The zygote: one container serves up to ``max_jobs`` candidates in turn, each in a fresh box.

Start-up (once per container): import the preload modules and :mod:`galapagos_sandbox.box`,
rehearse the job path, freeze the heap.  Then, job after job, without waiting to be asked (the
next box is ready by the time the host wants it):

1. fork a runner: a fresh copy of this process, which never held task data or a candidate
   (the zygote never reads its stdin: frames are the runners');
2. the runner builds the candidate's box and forks the candidate into it
   (:meth:`~galapagos_sandbox.candidate.CandidateProcess.spawn`), installs the sealed task if
   the container has one (its own ``task`` frame: the zygote never reads task data, so no later
   candidate can find it in memory it inherited), says ``ready``, runs exactly one job, writes
   the result, kills the box and removes the task files;
3. the zygote checks the container is as clean as before the job: the runner ended well (a
   timeout, OOM kill, output over the cap or broken runner asks to retire), no process but init
   and the zygote is left, no OOM kill happened, the trusted directory is empty.

Any doubt, or ``max_jobs`` served, and the zygote writes a ``retired`` frame and exits (the host
then removes the container); so it does, quietly, once a runner found the host gone (end of
stdin).  If the first box cannot be built (an engine whose kernel or
security profile refuses user namespaces), the runner writes an ``unboxable`` frame instead of
``ready``; the host then falls back to one fresh container per candidate.

Usage: ``python3 -P -s -S -m galapagos_sandbox.zygote '<RunnerConfig JSON>'``.
"""

from __future__ import annotations

import _signal as signal
import gc
import os
import sys

from galapagos_sandbox.config import RunnerConfig
from galapagos_sandbox.confine import oom_kill_count
from galapagos_sandbox.runner import HUNG_UP, Runner, rehearse
from galapagos_sandbox.wire import encode_frame, read_frame, write_all
from galapagos_sandbox.worker import fresh_randomness, install_site_builtins

__all__ = ["main"]

_PR_SET_CHILD_SUBREAPER = 36
#: Exit status of a runner whose box could not be built.
UNBOXABLE = 4


def _serve_one(cfg: RunnerConfig, preload_errors: list[str]) -> None:
    """In the forked runner: build the box, run one job (never returns)."""
    from galapagos_sandbox import box

    try:
        fresh_randomness()  # the evaluator's unseeded numpy draws differ from job to job
        # The box's init is forked by a short-lived builder: it must become our child.
        box._libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        runner = Runner(cfg)
        runner.preload_errors = preload_errors
        try:
            runner.process.spawn(fresh_interpreter=False)
        except box.BoxError as exc:
            write_all(1, encode_frame({"kind": "unboxable", "error": str(exc)}))
            os._exit(UNBOXABLE)
        runner.process.ping()
        signal.signal(signal.SIGALRM, runner._watchdog)
        if cfg.task:
            frame = read_frame(0, max_frame=cfg.max_job_bytes)
            if frame is None:  # the host hung up: the container is being removed
                runner.process.shutdown()
                os._exit(HUNG_UP)
            runner.preload_task(frame)
        runner.say_ready()
        runner.run()
    finally:
        os._exit(70)


def _leftovers(cfg: RunnerConfig, oom_before: int | None) -> str:
    """Why the container is not as clean as before the job ("" when it is)."""
    me = os.getpid()
    others = [p for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, me)]
    if others:
        return f"processes left after the job: {', '.join(sorted(others)[:5])}"
    oom_now = oom_kill_count(cfg)
    if oom_now != oom_before:
        return "the kernel OOM-killed a process in the container"
    try:
        left = os.listdir(cfg.trusted_dir)
    except OSError as exc:
        return f"the trusted directory is unreadable ({exc})"
    if left:
        return f"files left in the trusted directory: {', '.join(sorted(left)[:5])}"
    return ""


def _retire(why: str) -> None:
    write_all(1, encode_frame({"kind": "retired", "why": why}))
    os._exit(0)


def serve(cfg: RunnerConfig, preload_errors: list[str]) -> None:
    """Fork one runner after another until ``max_jobs``, the first anomaly or the host's
    hang-up."""
    oom_before = oom_kill_count(cfg)
    served = 0
    while True:
        pid = os.fork()
        if pid == 0:
            _serve_one(cfg, preload_errors)
        _, status = os.waitpid(pid, 0)
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) in (UNBOXABLE, HUNG_UP):
            os._exit(0)  # the runner said why, or nobody is listening any more
        served += 1
        if status != 0:
            code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)
            _retire(f"the runner of job {served} ended with status {code}")
        why = _leftovers(cfg, oom_before)
        if why:
            _retire(why)
        if served >= cfg.max_jobs:
            _retire(f"served {served} jobs")


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    cfg = RunnerConfig.from_json(args[0])
    install_site_builtins()
    errors = []
    for name in cfg.preload:
        try:
            __import__(name)
        except Exception as exc:  # noqa: BLE001 - reported in every ready frame
            errors.append(f"{name}: {type(exc).__name__}: {exc}")
    import galapagos_sandbox.box  # noqa: F401 - ctypes and its libc, once, before any fork

    rehearse(cfg)
    # Objects that exist now are never collected: the collector would otherwise walk (and so
    # copy-on-write) every page the runners and candidates share with us.
    gc.freeze()
    serve(cfg, errors)


if __name__ == "__main__":
    main()
