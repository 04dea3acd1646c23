"""The seam between the evaluator driver and whatever runs untrusted code.

A :class:`Job` is one stage of one candidate's evaluation, as plain data: the trusted task files
(evaluator module and its data), the candidate's source, which evaluator function to call, and
the limits.  No host paths cross this seam, so a backend may run the job in a local process, a
local Docker engine, or (later) a remote node.

A backend returns an :class:`~harness.core.records.EvalResult` whose ``status`` says how the job
ended (ok, timeout, oom, output_limit, crash, invalid_result, …).  A candidate's misbehaviour is
never an exception; :class:`~harness.core.errors.SandboxError` means the backend itself is broken.

Evaluator modes:

``sealed``
    The trusted evaluator function is called with a *candidate handle*: ``candidate.call(name,
    *args, timeout=None)`` runs ``name(*args)`` from the candidate program in a separate,
    unprivileged process and returns plain data (None/bool/int/float/str/list/dict/numeric
    numpy arrays).  The candidate never shares a process with the scorer.
``compat``
    An OpenEvolve/SkyDiscover evaluator ``evaluate(program_path)`` (or ``evaluate_stageN``) runs
    unmodified.  It imports the candidate itself, so both run in the unprivileged process:
    isolated from the host, but a candidate can tamper with its own evaluation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from harness.core.records import EvalResult

__all__ = ["Job", "Limits", "SandboxBackend"]


@dataclass(frozen=True)
class Limits:
    """Resource limits for one job (defaults suit a numpy/scipy task)."""

    #: Host-side deadline for the whole job; the container (or process group) is killed after it.
    wall_s: float = 60.0
    memory_mb: int = 1024
    cpus: float = 1.0
    pids: int = 128
    #: Cap on captured stdout+stderr of the candidate and on the result document.
    output_bytes: int = 1 << 20
    tmpfs_mb: int = 64
    nofile: int = 256
    fsize_mb: int = 64


@dataclass(frozen=True)
class Job:
    mode: Literal["sealed", "compat"]
    #: Evaluator function to call: ``evaluate`` or ``evaluate_stage1`` …
    function: str
    #: The candidate program's source text.
    candidate: str
    #: Trusted task files, relative path → bytes (at least the evaluator module).
    files: Mapping[str, bytes]
    #: Module (file stem in ``files``) holding the evaluator functions.
    evaluator_module: str = "evaluator"
    candidate_filename: str = "program.py"
    limits: Limits = field(default_factory=Limits)
    #: Image name (a key of ``sandbox_images/``), ignored by the local backend.
    image: str = "python-eval"
    #: Modules to import before the job arrives (warm pools pre-import them).
    preload: tuple[str, ...] = ()
    #: Extra labels for the container (the backend adds its own run/owner labels).
    labels: Mapping[str, str] = field(default_factory=dict)
    #: Extra environment for the evaluator (never secrets; the backend starts from empty).
    env: Mapping[str, str] = field(default_factory=dict)
    #: A compat evaluator's ``[sys.executable, script]`` subprocess may run in a warm
    #: interpreter (``evaluator.warm_python``; see ``jobs.warm_python``).
    warm_python: bool = True


@runtime_checkable
class SandboxBackend(Protocol):
    """Runs jobs.  Implementations: ``LocalBackend`` (unsafe, subprocess) and ``DockerBackend``.

    Optional extension (not part of the protocol, looked up with ``getattr``):
    ``async prewarm(job, demand=None)`` starts preparing sandboxes shaped like ``job`` (warm
    pool) and returns without waiting; ``demand``, when given, is how many such jobs will run at
    once (a run's parallel iterations; it is passed only when known).  A job's
    ``labels["galapagos.run"]`` names the run its containers belong to (warm containers are
    pooled per run).
    """

    name: str

    async def run(self, job: Job) -> EvalResult:
        """Run one job to completion (or to its deadline) and report how it ended."""
        ...

    async def aclose(self) -> None:
        """Stop pools and remove every container/process this backend started."""
        ...
