"""Host side of the job protocol: Job → frame, runner config, result document → EvalResult.

The result document comes from inside a container, so it is re-checked here with the same
schema the runner applies (size is capped by the reader, numbers must be finite, string metrics
only for error-like keys) before it becomes an :class:`~harness.core.records.EvalResult`.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import sys
from collections.abc import Mapping
from typing import Any, cast, get_args

from galapagos_sandbox.config import RunnerConfig
from galapagos_sandbox.schema import ResultError, clean_text, normalize_result, tail
from galapagos_sandbox.wire import encode_frame

from harness.core.records import EvalResult, EvalStatus
from harness.sandbox.protocol import Job, Limits

__all__ = [
    "STATUSES",
    "warm_modules",
    "encode_job",
    "encode_task",
    "failure_result",
    "result_from_document",
    "runner_config",
    "task_digest",
    "warm_python",
    "WARM_PYTHON_MODULES",
]

STATUSES = frozenset(get_args(EvalStatus))
#: The host reads at most this much beyond the result cap (frame overhead, runner messages).
FRAME_SLACK = 64 * 1024
TAIL_CHARS = 4000


def runner_config(limits: Limits, preload: tuple[str, ...], **where: Any) -> RunnerConfig:
    """The runner's start-up config for these limits; ``where`` sets paths/uid/container."""
    return RunnerConfig(
        preload=tuple(preload),
        wall_s=limits.wall_s,
        output_bytes=limits.output_bytes,
        nofile=limits.nofile,
        fsize_mb=limits.fsize_mb,
        **where,
    )


#: Imported along with these (lazily loaded submodules candidates of such tasks often use).
_ALONG = {"numpy": ("numpy.random",)}
_IMPORTS = re.compile(
    r"^[ \t]*(?:from[ \t]+([A-Za-z_][\w.]*)[ \t]+import\b|import[ \t]+([^#\n;()]+))", re.M
)
#: Standard-library modules never imported ahead (side effects at import, or useless here).
_NOT_AHEAD = frozenset({"antigravity", "this", "idlelib", "tkinter", "turtle", "turtledemo"})


def warm_modules(job: Job) -> tuple[str, ...]:
    """The modules a sandbox imports before its job arrives: the task card's ``preload``, the
    standard-library and preloaded packages' modules the evaluator imports, and submodules
    that go with them (``numpy.random``).

    A zygote imports them once and forks every runner and candidate from that state, so no job
    pays for them (the evaluator module itself is never imported ahead: it is task data).
    Only names are read from the evaluator; a name the image lacks is reported at start-up."""
    wanted = list(job.preload)
    roots = {name.split(".")[0] for name in job.preload}
    source = bytes(job.files.get(f"{job.evaluator_module}.py") or b"")
    # Import statements read line by line, not with ``ast``: this runs on the backend's threads,
    # and CPython 3.11 before 3.11.8 can fail an ``ast.parse`` racing a compile in another
    # thread ("AST constructor recursion depth mismatch").  A line that only looks like an
    # import (in a string) costs at most an import of a standard module.
    for line in _IMPORTS.finditer(source.decode("utf-8", "replace")):
        source_module, imported = line.group(1), line.group(2)
        names = [source_module] if source_module else []
        if imported:
            names = [part.split(" as ")[0].strip() for part in imported.split(",")]
        for name in names:
            root = name.split(".")[0]
            if not name.replace(".", "").replace("_", "").isalnum():
                continue
            if (root in sys.stdlib_module_names and root not in _NOT_AHEAD) or root in roots:
                wanted.append(name)
    for name in list(wanted):
        wanted.extend(_ALONG.get(name, ()))
    if warm_python(job):
        wanted.extend(WARM_PYTHON_MODULES)
    return tuple(dict.fromkeys(wanted))


#: What the warm interpreter (``galapagos_sandbox.warm``) uses, imported before it forks.
WARM_PYTHON_MODULES = ("marshal", "site", "socket", "subprocess")


def warm_python(job: Job) -> bool:
    """Whether the job's candidate process forks a warm interpreter before the job: compat
    jobs only (their evaluator shares the candidate's process and uid anyway), and only when
    the evaluator names ``sys.executable`` (it runs the program in a fresh interpreter, which
    would import numpy all over again)."""
    if job.mode != "compat" or not job.warm_python:
        return False
    return b"sys.executable" in bytes(job.files.get(f"{job.evaluator_module}.py") or b"")


def task_digest(job: Job) -> str:
    """What identifies a job's sealed task: evaluator module, environment and every file."""
    h = hashlib.sha256(json.dumps([job.evaluator_module, sorted(job.env.items())]).encode())
    for name in sorted(job.files):
        data = job.files[name]
        h.update(f"\0{name}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


def _files(job: Job) -> tuple[list[list[Any]], bytes]:
    files, parts, offset = [], [], 0
    for name, data in job.files.items():
        files.append([name, offset, len(data)])
        parts.append(bytes(data))
        offset += len(data)
    return files, b"".join(parts)


def encode_task(job: Job, digest: str) -> bytes:
    """The ``task`` frame a runner installs before ``ready`` (sealed jobs only)."""
    files, blob = _files(job)
    header = {
        "kind": "task",
        "digest": digest,
        "evaluator_module": job.evaluator_module,
        "env": dict(job.env),
        "files": files,
    }
    return encode_frame(header, blob)


def encode_job(job: Job, *, installed: str | None = None) -> bytes:
    """The ``job`` frame; with ``installed`` (a task digest) the runner already holds the task
    and the frame carries only the candidate."""
    files, blob = _files(job) if installed is None else ([], b"")
    header = {
        "kind": "job",
        "mode": job.mode,
        "function": job.function,
        "evaluator_module": job.evaluator_module,
        "candidate": job.candidate,
        "candidate_filename": job.candidate_filename,
        "wall_s": job.limits.wall_s,
        "env": dict(job.env) if installed is None else {},
        "files": files,
        "task_digest": installed,
    }
    return encode_frame(header, blob)


def failure_result(
    status: EvalStatus,
    error: str,
    *,
    duration_s: float = 0.0,
    exit_code: int | None = None,
    oom_killed: bool = False,
    output_truncated: bool = False,
    stderr_tail: str = "",
    stdout_tail: str = "",
    traceback: str = "",
) -> EvalResult:
    """A failed evaluation whose metrics satisfy :func:`harness.core.scoring.is_failure`."""
    metrics: dict[str, Any] = {"combined_score": 0.0, "validity": 0.0}
    if status == "timeout":
        metrics["timeout"] = True
    artifacts = {"error": clean_text(error) or status, "failure_reason": status}
    if traceback:
        artifacts["traceback"] = clean_text(tail(traceback, TAIL_CHARS))
    if stdout_tail:
        artifacts["stdout_tail"] = clean_text(tail(stdout_tail, TAIL_CHARS))
    return EvalResult(
        status=status,
        metrics=metrics,
        artifacts=artifacts,
        duration_s=duration_s,
        exit_code=exit_code,
        timed_out=status == "timeout",
        oom_killed=oom_killed or status == "oom",
        output_truncated=output_truncated or status == "output_limit",
        stderr_tail=clean_text(tail(stderr_tail, TAIL_CHARS)),
    )


def _text(doc: Mapping[str, Any], key: str) -> str:
    value = doc.get(key, "")
    return clean_text(tail(value, TAIL_CHARS)) if isinstance(value, str) else ""


def result_from_document(doc: Mapping[str, Any], *, duration_s: float) -> EvalResult:
    """Validate the runner's result document and turn it into an EvalResult."""
    raw_status = doc.get("status")
    if raw_status not in STATUSES:
        return failure_result(
            "invalid_result", f"result has unknown status {raw_status!r:.40}", duration_s=duration_s
        )
    status = cast(EvalStatus, raw_status)
    stdout_tail, stderr_tail = _text(doc, "stdout_tail"), _text(doc, "stderr_tail")
    # An escaped CandidateBadOutput is "invalid" without metrics: a failure like the others.
    if status not in ("ok", "invalid") or (status == "invalid" and "metrics" not in doc):
        code = doc.get("exit_code")
        return failure_result(
            status,
            _text(doc, "error") or status,
            duration_s=duration_s,
            exit_code=code if type(code) is int else None,
            stdout_tail=stdout_tail,
            stderr_tail=stderr_tail,
            traceback=_text(doc, "traceback"),
        )
    metrics, artifacts = doc.get("metrics"), doc.get("artifacts")
    if not isinstance(metrics, dict) or not isinstance(artifacts, dict):
        return failure_result("invalid_result", "result without metrics", duration_s=duration_s)
    try:
        metrics, artifacts = normalize_result({**metrics, "artifacts": artifacts})
    except ResultError as exc:
        return failure_result(
            "invalid_result", str(exc), duration_s=duration_s, stderr_tail=stderr_tail
        )
    validity = metrics.get("validity")
    if isinstance(validity, int | float) and not isinstance(validity, bool):
        status = "invalid" if validity in (0, -1) else "ok"
    if "combined_score" in metrics and not math.isfinite(float(metrics["combined_score"])):
        return failure_result(
            "invalid_result", "combined_score is not finite", duration_s=duration_s
        )
    if stdout_tail:
        artifacts.setdefault("stdout_tail", stdout_tail)
    return EvalResult(
        status=status,
        metrics=metrics,
        artifacts=artifacts,
        duration_s=duration_s,
        stderr_tail=stderr_tail,
    )
