"""``DockerBackend``: every job in a fresh isolation unit inside a hardened container.

Two isolation units (``docs/sandbox.md``, threat model):

- **boxes** (default): a zygote container (:mod:`galapagos_sandbox.zygote`) serves up to
  ``reuse`` jobs one after another, each candidate in a box of fresh user, mount, PID, network,
  IPC and UTS namespaces with its own tmpfs, built by a freshly forked runner; the container is
  retired after ``reuse`` jobs or any anomaly.  The engine's cost of a container (~0.3 CPU-s
  on two cores) is paid once per ``reuse`` jobs instead of once per job.
- **single-use containers** (``reuse=1``, or an engine whose kernel refuses the boxes' user
  namespaces): one job = create → attach → start → ``ready`` → job frame → result frame →
  remove.

With the warm pool a job finds its container (and its box) ready before the job existed; a
zygote container then comes back to the pool (``next`` → a fresh box → ``ready``) in the
background.  A monotonic host deadline
(``wall_s`` + grace, counted from the moment the job is sent) kills the whole container; the
result says why a job ended: ok/invalid from the runner's document, else timeout, oom
(``State.OOMKilled``), output_limit, crash (exit code, stderr tail) or invalid_result.
Removal of a finished container happens in the background, off the critical path; ``aclose``
waits for it.  The runner stays (idle) until the host hangs up at removal, so the container's
teardown is off the critical path too.

Infrastructure faults are not the candidate's: the engine unreachable or restarting, the
container removed or killed from outside (exit 137/143 without an OOM kill: a candidate runs as
another uid and cannot signal the runner), the attach stream broken before the job was
delivered, the image missing.  Such a job is retried on a fresh container (with backoff; while
the engine is down the backend waits for it, up to ``engine_wait_s``, then re-checks its images,
drops dead warm containers and reaps what the restart left behind); the result records the
faults it survived in ``infra_retries``.  All of a backend's jobs share one wait per outage
(:class:`~harness.sandbox.engine.EngineWaiter`): one message, one clean-up.  Past the wait
deadline :class:`~harness.core.errors.EngineUnavailable` ends the run as interrupted.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import threading
import time
import uuid
from collections import deque
from concurrent.futures import Future, InvalidStateError, ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Any

import docker
import docker.errors
import requests.exceptions
from docker.models.containers import Container
from galapagos_sandbox.wire import WireError

from harness.core.errors import InfrastructureFault, SandboxError, SandboxUnavailable
from harness.core.records import EvalResult
from harness.sandbox import images, ownership
from harness.sandbox.attach import AttachedStream, OutputLimitExceeded
from harness.sandbox.engine import EngineWaiter, engine_reachable
from harness.sandbox.hardening import (
    CANDIDATE_UID,
    TRUSTED_DIR,
    ContainerSpec,
    create_hardened_container,
    minimal_env,
)
from harness.sandbox.jobs import (
    FRAME_SLACK,
    encode_job,
    encode_task,
    failure_result,
    result_from_document,
    task_digest,
    warm_modules,
    warm_python,
)
from harness.sandbox.jobs import runner_config as make_runner_config
from harness.sandbox.pool import PoolKey, WarmPool
from harness.sandbox.protocol import Job
from harness.sandbox.seccomp import profile_json

__all__ = ["DockerBackend"]

log = logging.getLogger(__name__)

HOST_GRACE_S = 2.0
#: How long a job waits for an unreachable engine before the run stops (evaluator.engine_wait_s).
ENGINE_WAIT_S = 300.0
#: Infrastructure faults one job survives before it is an error (each on a fresh container).
INFRA_RETRIES = 5
#: Exit codes of a container stopped from outside (SIGKILL, SIGTERM), when not OOM-killed.
STOPPED_FROM_OUTSIDE = (137, 143)
REMOVE_DELAY_S = 0.05
STARTUP_S = 60.0
#: -P: no script dir on sys.path; -s/-S: no user or site packages (PYTHONPATH has everything,
#: and skipping site saves start-up time in every container).
PYTHON_FLAGS = ("-P", "-s", "-S")
IMAGE_PYTHONPATH = f"{images.RUNTIME}:{images.SITE}"
#: Jobs a zygote container serves (each in a fresh box) before it is replaced.
DEFAULT_REUSE = 64
#: Zygote containers kept per job shape before its first job (they come back after a job; the
#: first job raises it to two, one serving and one ready, and parallel jobs to one more each).
ZYGOTE_SPARE = 1


@dataclass
class _Preface:
    """Jobs the first zygote container of ``image`` (a name) runs, each in a fresh box, before
    it serves the run: the start-up canaries (:meth:`DockerBackend.canaries_first`)."""

    image: str
    jobs: list[Job]
    #: Their results, in order; None: they could not run there (run them elsewhere).
    results: Future[list[EvalResult] | None]


def _settle(
    results: Future[list[EvalResult] | None],
    value: list[EvalResult] | None = None,
    error: BaseException | None = None,
) -> None:
    """Give a preface's waiter its results (or ``error``), unless it gave up: a run that stops
    while its canaries run (its LLM endpoint refused, Ctrl-C) cancels the future it awaited,
    and the container still finishes its start-up jobs."""
    with contextlib.suppress(InvalidStateError):
        if error is not None:
            results.set_exception(error)
        else:
            results.set_result(value)


class _Retired(SandboxError):
    """A zygote container that will serve no more jobs (it says why)."""


class _Unboxable(SandboxError):
    """The engine refuses what a box needs (user namespaces): use single-use containers."""


@dataclass
class _Started:
    container: Container
    stream: AttachedStream
    #: Digest of the sealed task its runner installed (the job frame then omits the files).
    task: str | None = None
    #: A zygote container (comes back after a job) rather than a single-use one.
    boxed: bool = False
    #: Jobs it served so far.
    served: int = 0


def default_pool_size() -> int:
    return min(8, 2 * (os.cpu_count() or 1))


def default_pool_creators() -> int:
    # One container start per core: starts are CPU-bound in the engine, so more concurrent
    # ones only contend (on 2 cores, 2 creators sustained at least as many evaluations as 4).
    return max(1, min(4, os.cpu_count() or 1))


class DockerBackend:
    """Runs each job in a fresh box or container (see the module docstring and
    :mod:`harness.sandbox.hardening`).

    ``pool_size`` warm containers per job shape (default ``min(8, 2 × cores)``, 0 disables the
    pool and reuse) are kept by ``pool_creators`` threads (default one per core, at most 4); at
    most ``max_parallel`` engine calls of jobs (cold starts, kills) run at once.  ``reuse``: jobs
    a zygote container serves, each in a fresh box (default :data:`DEFAULT_REUSE`; 1 means a
    fresh single-use container per job).  ``parallel``: jobs the caller will run at once
    (parallel iterations): zygote containers for all of them start while the first job runs.
    ``reap`` removes containers of dead owners at start-up; ``build`` builds a missing image on
    first use; ``runtime`` selects the OCI runtime (``"runsc"`` for gVisor).  Raises
    :class:`~harness.core.errors.SandboxUnavailable` when the engine is not reachable.
    """

    name = "docker"

    def __init__(
        self,
        *,
        client: docker.DockerClient | None = None,
        pool_size: int | None = None,
        pool_creators: int | None = None,
        max_parallel: int = 32,
        reap: bool = True,
        build: bool = True,
        runtime: str | None = None,
        engine_wait_s: float = ENGINE_WAIT_S,
        infra_retries: int = INFRA_RETRIES,
        reuse: int | None = None,
        parallel: int = 1,
    ) -> None:
        try:
            self.client = client or docker.from_env(timeout=120, max_pool_size=64)
            if self.client.api.base_url.startswith("http+docker://"):
                # A Unix socket has no proxy: skip requests' scan of the environment for one
                # on every engine call (~2 ms of CPU per evaluation, six calls each).
                self.client.api.trust_env = False
            self.client.ping()
        except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
            raise SandboxUnavailable(
                f"the Docker engine is not reachable ({exc}); start it with "
                "`bash scripts/docker-engine.sh`"
            ) from exc
        self.runtime = runtime
        self.build = build
        self.reuse = max(1, DEFAULT_REUSE if reuse is None else reuse)
        #: Zygote containers with boxes; False for single-use containers (``reuse=1``, or an
        #: engine that refused the first box).
        self.boxes = self.reuse > 1
        self._profile: str | None = None
        self.engine_wait_s = engine_wait_s
        self.infra_retries = infra_retries
        #: One wait per outage for all of this backend's jobs (see the module docstring).
        self.engine = EngineWaiter(
            lambda: engine_reachable(self.client), engine_wait_s, on_return=self._after_outage
        )
        self._build_lock = threading.Lock()
        self.owner = ownership.owner_id()
        self.instance = uuid.uuid4().hex[:12]
        self.reaped = ownership.reap_orphans(self.client) if reap else []
        self._recipes = images.load_recipes()
        self._tags: dict[str, str] = {}
        #: Sealed tasks seen so far: digest → the ``task`` frame that installs it; and each
        #: job shape's digest, by the files mapping's identity (kept alive with it), so a run's
        #: jobs, which share one mapping, hash their files once.
        self._task_frames: dict[str, bytes] = {}
        self._digests: dict[tuple[int, str, tuple[tuple[str, str], ...]], tuple[object, str]] = {}
        self._warmed: dict[tuple[Any, ...], tuple[object, tuple[tuple[str, ...], bool]]] = {}
        self._executor = ThreadPoolExecutor(max_parallel, thread_name_prefix="galapagos-job")
        self._remover = ThreadPoolExecutor(2, thread_name_prefix="galapagos-rm")
        self._removals: set[Future[None]] = set()
        self._live: dict[str, Container] = {}
        #: Ids of the most recent containers this backend created (for tests and debugging).
        self.history: deque[str] = deque(maxlen=10_000)
        #: Id of the container each recent job ran in, in the order the jobs started.
        self.served_by: deque[str] = deque(maxlen=10_000)
        self._lock = threading.Lock()
        self._closed = False
        self._preface: _Preface | None = None
        size = default_pool_size() if pool_size is None else pool_size
        if pool_size is None and self.boxes:
            size = max(size, parallel + 1)  # one container per job in flight, and one more
        self.pool: WarmPool[_Started] | None = (
            WarmPool(
                self._start,
                self._discard,
                size=size,
                creators=default_pool_creators() if pool_creators is None else pool_creators,
                spare=ZYGOTE_SPARE if self.boxes else None,
                reused=self.boxes,
                demand=parallel,
            )
            if size > 0
            else None
        )

    # -- public API --------------------------------------------------------------------------

    async def run(self, job: Job) -> EvalResult:
        """Run ``job`` in a fresh container: a warm one when the pool has it, else a cold one.

        The exchange itself happens on the event loop (no thread hop on the warm path); engine
        calls that block (start, kill, inspect) go to the backend's threads.  Infrastructure
        faults are retried on a fresh container (see the module docstring).
        """
        faults: list[str] = []
        loop = asyncio.get_running_loop()
        while True:
            if self._closed:
                raise SandboxError("the Docker sandbox backend is closed")
            try:
                result = await self._run_once(job)
            except InfrastructureFault as exc:
                if len(faults) >= self.infra_retries:
                    raise SandboxError(
                        f"{len(faults) + 1} infrastructure faults in a row on one evaluation; "
                        f"last: {exc}"
                    ) from exc
                # On the backend's own threads: close() ends the wait (the default executor
                # would keep a waiting thread, and the process, alive until the deadline).
                faults.append(
                    await loop.run_in_executor(
                        self._executor, self._recover, str(exc), len(faults) + 1
                    )
                )
                continue
            if faults:
                return dataclasses.replace(result, infra_retries=tuple(faults))
            return result

    def _recover(self, why: str, attempt: int) -> str:
        """Wait (bounded, shared) for an unreachable engine, else back off; the fault as
        recorded."""
        waited = self.engine.wait(why)
        if waited > 0:
            return f"{why} (the engine was back after {waited:.1f} s)"
        log.warning("retrying an evaluation on a fresh container: %s", why)
        time.sleep(min(0.2 * 2 ** (attempt - 1), 5.0))
        return why

    def _after_outage(self, waited: float = 0.0) -> None:
        """The engine is back: re-check images, drop dead warm containers, remove this
        backend's stopped containers and reap dead owners' (the run itself, not a later one).
        A container created meanwhile and removed here fails its start as removed from outside,
        which is retried like any fault."""
        with self._build_lock:
            self._tags.clear()  # a restarted engine may have lost an image: check again
        if self.pool is not None:
            self.pool.flush()
        with contextlib.suppress(docker.errors.APIError, requests.exceptions.RequestException):
            stopped = [
                c
                for c in self.client.containers.list(
                    all=True,
                    ignore_removed=True,
                    filters={"label": f"{ownership.BACKEND_LABEL}={self.instance}"},
                )
                # exited: stopped by the outage; created: a create whose answer was lost
                if c.status in ("exited", "created", "dead")
            ]
            gone = set(ownership.remove_containers(stopped))
            with self._lock:
                for container in stopped:
                    if container.name in gone:
                        self._live.pop(container.id, None)
            ownership.reap_orphans(self.client)

    async def _run_once(self, job: Job) -> EvalResult:
        loop = asyncio.get_running_loop()
        key = self._cached_key(job)
        if key is None:  # resolving the image may build it: off the event loop
            key = await loop.run_in_executor(self._executor, self._resolve, job)
        started = await self.pool.wait(key, STARTUP_S) if self.pool is not None else None
        back = False
        try:
            if started is not None and started.stream.at_eof():
                self._discard(started)  # its runner died while waiting: never hand it out
                started = None
            t0 = time.monotonic()
            if started is None:
                labels = {k: v for k, v in job.labels.items() if k.startswith("galapagos.")}
                starting = self._executor.submit(self._start, key, labels)
                try:
                    started = await asyncio.wrap_future(starting)
                except asyncio.CancelledError:
                    starting.add_done_callback(self._discard_started)  # it may still succeed
                    raise
            self.served_by.append(started.container.id)
            result, reusable = await self._exchange(started, job, t0)
            back = reusable and started.boxed and self.pool is not None and not self._closed
            return result
        finally:
            if self.pool is not None:
                self.pool.done(key, returning=back)
            if started is not None:
                if back:
                    self._recycle(key, started)
                else:
                    self._discard(started)

    async def prewarm(self, job: Job, demand: int | None = None) -> None:
        """Start filling the warm pool for jobs shaped like ``job`` (does not wait for it);
        ``demand``: how many of them will run at once (a run's parallel iterations)."""
        if self.pool is not None:
            key = self._cached_key(job)
            # Resolving the image may build it: keep that off the event loop.
            try:
                if key is None:
                    key = await asyncio.get_running_loop().run_in_executor(
                        self._executor, self._resolve, job
                    )
            except InfrastructureFault as exc:  # the job itself will wait for the engine
                log.debug("not prewarming: %s", exc)
                self._drop_preface()
                return
            if self._preface is not None and self._tags.get(self._preface.image) != key.image:
                self._drop_preface()  # this run's image is another: no container will run them
            self.pool.want(key, demand)
        else:
            self._drop_preface()

    def canaries_first(self, image: str, jobs: list[Job]) -> Future[list[EvalResult] | None]:
        """Have the first zygote container started for image ``image`` (the next prewarm's)
        run ``jobs`` first, each in a fresh box of its own (a sealed task of its own), before
        its first box for the run; their results, in order, are the future's.  None in it:
        they could not run there (no pool, no boxes, the prewarm is for another image, the
        backend closed); an error: they did not finish (fail closed)."""
        results: Future[list[EvalResult] | None] = Future()
        with self._lock:
            if self._preface is not None or self._closed or not self.boxes or self.pool is None:
                results.set_result(None)
            else:
                self._preface = _Preface(image, list(jobs), results)
        return results

    def _drop_preface(self) -> None:
        with self._lock:
            preface, self._preface = self._preface, None
        if preface is not None:
            _settle(preface.results)

    def _claim_preface(self, key: PoolKey) -> _Preface | None:
        with self._lock:
            preface = self._preface
            if preface is None or self._tags.get(preface.image) != key.image:
                return None
            self._preface = None
            return preface

    def _serve_preface(self, started: _Started, key: PoolKey, preface: _Preface) -> None:
        """Run the preface's jobs in ``started``, one fresh box each (see ``canaries_first``).
        An engine fault hands them to the next container; any other failure fails them."""
        stream, results = started.stream, []
        try:
            for job in preface.jobs:
                digest = task_digest(job) if key.task is not None else None
                self._prepare(started, key, task=encode_task(job, digest) if digest else b"")
                stream.new_exchange()
                t0 = time.monotonic()
                deadline = t0 + job.limits.wall_s + HOST_GRACE_S
                stream.send(encode_job(job, installed=digest), deadline)
                frame = stream.recv_frame(deadline)
                started.served += 1
                if frame is None or frame[0].get("kind") != "result":
                    why = stream.stderr_tail[-300:].strip() or "no result"
                    raise SandboxError(f"the container ended during a start-up job ({why})")
                results.append(result_from_document(frame[0], duration_s=time.monotonic() - t0))
        except _Unboxable:
            _settle(preface.results)  # single-use containers from now on: elsewhere
            raise
        except InfrastructureFault:
            with self._lock:
                if self._preface is None and not self._closed:
                    self._preface = preface  # the next container runs them
                    preface = None  # type: ignore[assignment]
            if preface is not None:
                _settle(preface.results)
            raise
        except BaseException as exc:
            _settle(
                preface.results,
                error=SandboxError(
                    f"start-up jobs in the run's first container: {exc or type(exc)}"
                ),
            )
            raise
        _settle(preface.results, results)

    def engine_back(self) -> None:
        """The engine came back after an outage a run did not wait out (the run stopped):
        the clean-up a waited-out outage gets, before the backend serves the next run."""
        self._after_outage()

    def release_run(self, run_id: str) -> None:
        """A run ended while the backend serves others: drop its warm containers now rather
        than after the pool's idle timeout."""
        self._drop_preface()  # its first container may never start now: run them elsewhere
        if self.pool is not None:
            self.pool.drop(lambda key: key.run != run_id)

    async def aclose(self) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self.close)

    def close(self) -> None:
        """Stop the pool and remove every container this backend created (blocking)."""
        if self._closed:
            return
        self._closed = True
        self.engine.close()
        if self.pool is not None:
            self.pool.close()
        self._drop_preface()
        self._executor.shutdown(wait=True)
        with self._lock:
            pending = list(self._removals)
        for fut in pending:
            with contextlib.suppress(Exception):
                fut.result(timeout=120)
        self._remover.shutdown(wait=True)
        with self._lock:
            leftovers = list(self._live.values())
        ownership.remove_containers(leftovers)
        # Belt and braces: anything carrying this backend's label, however it escaped tracking.
        with contextlib.suppress(docker.errors.APIError, requests.exceptions.RequestException):
            stray = self.client.containers.list(
                ignore_removed=True,
                all=True,
                filters={"label": f"{ownership.BACKEND_LABEL}={self.instance}"},
            )
            ownership.remove_containers(stray)

    # -- containers --------------------------------------------------------------------------

    def image_tag(self, name: str) -> str:
        """Tag of image ``name``, built first if missing and ``build`` was allowed."""
        with self._build_lock:
            if name not in self._tags:
                tag = images.image_tag(name, self._recipes)
                if not images.image_present(self.client, tag):
                    if not self.build:
                        raise SandboxUnavailable(
                            f"sandbox image {tag} is not built; run `galapagos sandbox build`"
                        )
                    log.info("building sandbox image %s (first use)", tag)
                    images.build_images(
                        [name], client=self.client, progress=log.info, on_demand=False
                    )
                self._tags[name] = tag
            return self._tags[name]

    def image_id(self, name: str) -> str:
        """The content id (``sha256:…``) of image ``name`` (built first if missing)."""
        return str(self.client.images.get(self.image_tag(name)).id)

    def _resolve(self, job: Job) -> PoolKey:
        """The job's pool key, resolving (maybe building) its image; an engine that stops
        answering meanwhile is an infrastructure fault, not a broken image."""
        try:
            return self._key(job)
        except SandboxError as exc:
            if isinstance(exc, InfrastructureFault) or engine_reachable(self.client):
                raise
            raise InfrastructureFault(f"could not look up the sandbox image: {exc}") from exc

    def _key(self, job: Job, tag: str | None = None) -> PoolKey:
        modules, warm_interpreter = self._warm(job)
        return PoolKey(
            tag or self.image_tag(job.image),
            modules,
            job.limits,
            job.labels.get(ownership.RUN_LABEL),
            self._task(job) if job.mode == "sealed" else None,
            warm_interpreter,
        )

    def _warm(self, job: Job) -> tuple[tuple[str, ...], bool]:
        """:func:`~harness.sandbox.jobs.warm_modules` and :func:`~harness.sandbox.jobs.warm_python`
        of the job, once per files mapping (not a scan of the evaluator per job)."""
        shape = (id(job.files), job.evaluator_module, job.preload, job.mode, job.warm_python)
        seen = self._warmed.get(shape)
        if seen is None or seen[0] is not job.files:
            if len(self._warmed) > 64:
                self._warmed.clear()
            seen = self._warmed[shape] = (job.files, (warm_modules(job), warm_python(job)))
        return seen[1]

    def _task(self, job: Job) -> str:
        """Digest of the job's sealed task, remembering the frame that installs it."""
        shape = (id(job.files), job.evaluator_module, tuple(sorted(job.env.items())))
        seen = self._digests.get(shape)
        if seen is None or seen[0] is not job.files:
            seen = (job.files, task_digest(job))
            if len(self._digests) > 64:
                self._digests.clear()
            self._digests[shape] = seen
            if seen[1] not in self._task_frames:
                self._task_frames[seen[1]] = encode_task(job, seen[1])
        return seen[1]

    def _cached_key(self, job: Job) -> PoolKey | None:
        """The job's pool key if its image is already resolved (no engine call, no lock)."""
        tag = self._tags.get(job.image)
        return self._key(job, tag) if tag else None

    def _labels(self, key: PoolKey, extra: dict[str, str]) -> dict[str, str]:
        labels = {
            **extra,
            ownership.LABEL: "1",
            ownership.OWNER_LABEL: self.owner,
            ownership.BACKEND_LABEL: self.instance,
            ownership.ROLE_LABEL: "eval",
        }
        if key.run:
            labels[ownership.RUN_LABEL] = key.run
        return labels

    def _start(self, key: PoolKey, extra_labels: dict[str, str] | None = None) -> _Started:
        """Create, attach, start and wait for ``ready``: a container waiting for its job."""
        boxed = self.boxes
        try:
            return self._start_as(key, extra_labels, boxed=boxed)
        except _Unboxable as exc:
            if self.boxes:
                self.boxes = False
                log.warning(
                    "this Docker engine refuses the namespaces a sandbox box needs (%s); every "
                    "candidate gets a fresh single-use container instead (slower, as safe)",
                    exc,
                )
            return self._start_as(key, extra_labels, boxed=False)

    def _seccomp_profile(self) -> str:
        if self._profile is None:
            arch = str(self.client.info().get("Architecture") or os.uname().machine)
            self._profile = profile_json(arch)
        return self._profile

    def _start_as(
        self, key: PoolKey, extra_labels: dict[str, str] | None, *, boxed: bool
    ) -> _Started:
        cfg = make_runner_config(
            key.limits,
            key.preload,
            uid=CANDIDATE_UID,
            gid=CANDIDATE_UID,
            workdir="/tmp",
            trusted_dir=TRUSTED_DIR,
            container=True,
            compat_path=images.COMPAT,
            python="/usr/bin/python3",
            python_flags=PYTHON_FLAGS,
            task=key.task is not None,
            box=boxed,
            max_jobs=self.reuse if boxed else 1,
            tmpfs_mb=key.limits.tmpfs_mb,
            warm_python=key.warm_python,
        )
        spec = ContainerSpec(
            image=key.image,
            command=(
                "/usr/bin/python3",
                *PYTHON_FLAGS,
                "-m",
                "galapagos_sandbox.zygote" if boxed else "galapagos_sandbox.runner",
                cfg.to_json(),
            ),
            limits=key.limits,
            labels=self._labels(key, extra_labels or {}),
            env=minimal_env(pythonpath=IMAGE_PYTHONPATH),
            name=f"galapagos-{self.instance}-{uuid.uuid4().hex[:10]}",
            runtime=self.runtime,
            seccomp=self._seccomp_profile() if boxed else None,
        )
        try:
            container = create_hardened_container(self.client, spec)
        except SandboxError as exc:
            # A missing image (after an engine restart, or removed by hand) is looked up again,
            # and built if need be, by the retry; an unreachable engine is waited for.
            if isinstance(exc, SandboxUnavailable):
                self._forget_image(key.image)
            if isinstance(exc, SandboxUnavailable) or not engine_reachable(self.client):
                raise InfrastructureFault(f"could not create a sandbox container: {exc}") from exc
            raise
        with self._lock:
            self._live[container.id] = container
            self.history.append(container.id)
        stream = None
        try:
            stream = AttachedStream.open(
                self.client, container, max_frame=key.limits.output_bytes + FRAME_SLACK
            )
            container.start()
            started = _Started(container, stream, key.task, boxed=boxed)
            preface = self._claim_preface(key) if boxed else None
            if preface is not None:
                self._serve_preface(started, key, preface)
            self._prepare(started, key)
            return started
        except _Retired as exc:  # a zygote that cannot serve even one job: a broken image
            self._discard(_Started(container, stream) if stream else container)
            raise SandboxError(f"the sandbox runner in {key.image} did not start: {exc}") from exc
        except _Unboxable:
            self._discard(_Started(container, stream) if stream else container)
            raise
        except (
            TimeoutError,
            WireError,
            docker.errors.APIError,
            requests.exceptions.RequestException,
            OSError,
        ) as exc:
            self._discard(_Started(container, stream) if stream else container)
            if isinstance(exc, docker.errors.NotFound):  # the image, or the container itself
                raise InfrastructureFault(
                    f"could not start a sandbox container (removed from outside, or its image "
                    f"is missing): {exc}"
                ) from exc
            if not engine_reachable(self.client):
                raise InfrastructureFault(f"could not start a sandbox container: {exc}") from exc
            raise SandboxError(f"could not start a sandbox container: {exc}") from exc
        except BaseException:
            self._discard(_Started(container, stream) if stream else container)
            raise

    def _prepare(self, started: _Started, key: PoolKey, task: bytes | None = None) -> None:
        """Have a container's runner (a zygote's: the fresh one it forked after the last job,
        with a fresh box) install the task (``task``: another task frame than the key's) and
        say ``ready``.  Raises :class:`_Retired` when a zygote will serve no more."""
        stream = started.stream
        deadline = time.monotonic() + STARTUP_S
        data = b""
        if key.task is not None:
            # The runner imports the evaluator before ready, under the job's budget: wait
            # for that too, so a hanging import is answered by the runner as a timeout.
            deadline += key.limits.wall_s
            data += self._task_frames[key.task] if task is None else task
        if data:
            try:
                stream.send(data, deadline)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the stream ended: reading it below says so (and shows any stderr)
        frame = stream.recv_frame(deadline)
        kind = frame[0].get("kind") if frame is not None else None
        if kind == "ready":
            return
        if kind == "retired":
            raise _Retired(str(frame[0].get("why", "")) if frame else "")
        if kind == "unboxable":
            raise _Unboxable(str(frame[0].get("error", "")) if frame else "")
        if frame is None and not stream.stderr_tail.strip():
            raise InfrastructureFault(
                f"the container ({key.image}) ended before its runner said ready: stopped "
                "or removed from outside, or the engine went away"
            )
        why = stream.stderr_tail[-500:].strip() or (
            f"it sent a {kind!r} frame instead of 'ready'" if frame else "its stream ended"
        )
        raise SandboxError(f"the sandbox runner in {key.image} did not start: {why}")

    def _recycle(self, key: PoolKey, started: _Started) -> None:
        """In the background: a zygote container prepares a fresh box for its next job and
        goes back to the pool, or is removed if it retired (or anything went wrong)."""
        started.served += 1

        def recycle() -> None:
            try:
                if self._closed:
                    raise _Retired("the backend is closing")
                self._prepare(started, key)
            except (
                SandboxError,
                TimeoutError,
                WireError,
                OSError,
                docker.errors.APIError,
                requests.exceptions.RequestException,
            ) as exc:
                log.debug("zygote container not reused: %s", exc)
                assert self.pool is not None
                self.pool.abandon(key)
                self._remove(started, delay=False)
                return
            assert self.pool is not None
            self.pool.give_back(key, started)

        fut = self._remover.submit(recycle)
        with self._lock:
            self._removals.add(fut)
        fut.add_done_callback(self._removal_done)

    def _forget_image(self, tag: str) -> None:
        """The engine no longer has ``tag``: the next job resolves (and may build) it again."""
        with self._build_lock:
            for name in [name for name, known in self._tags.items() if known == tag]:
                del self._tags[name]

    def _discard_started(self, fut: Future[_Started]) -> None:
        if not fut.cancelled() and fut.exception() is None:
            self._discard(fut.result())

    def _discard(self, item: _Started | Container) -> None:
        """Remove a container in the background (never reused)."""
        fut = self._remover.submit(self._remove, item)
        with self._lock:
            self._removals.add(fut)
        fut.add_done_callback(self._removal_done)

    def _removal_done(self, fut: Future[None]) -> None:
        with self._lock:
            self._removals.discard(fut)

    def _remove(self, item: _Started | Container, *, delay: bool = True) -> None:
        if delay and not self._closed:
            time.sleep(REMOVE_DELAY_S)  # let the job's caller run first; removal is not urgent
        if isinstance(item, _Started):
            # A finished runner waits for this hang-up before it exits (its container's
            # teardown would otherwise compete with the caller for the CPU).
            item.stream.close()
        container = item.container if isinstance(item, _Started) else item
        # During an outage removal fails: the container stays tracked, and the clean-up after
        # the outage (or close) removes it.
        if ownership.remove_containers([container], warn_unanswered=False):
            with self._lock:
                self._live.pop(container.id, None)

    # -- one job -----------------------------------------------------------------------------

    async def _exchange(self, started: _Started, job: Job, t0: float) -> tuple[EvalResult, bool]:
        """Send the job, read its result; the flag says the container ended the job well (a
        zygote container may then serve another: it decides itself whether it will)."""
        stream, container = started.stream, started.container
        loop = asyncio.get_running_loop()
        blocking = partial(loop.run_in_executor, self._executor)
        elapsed = lambda: time.monotonic() - t0  # noqa: E731
        budget = job.limits.wall_s
        deadline = time.monotonic() + budget + HOST_GRACE_S
        stream.new_exchange()
        try:
            await stream.asend(encode_job(job, installed=started.task), deadline)
        except (OSError, TimeoutError) as exc:
            raise InfrastructureFault(
                f"the attach stream broke before the job was delivered ({exc or type(exc)})"
            ) from exc
        try:
            frame = await stream.arecv_frame(deadline)
        except TimeoutError:
            state = await blocking(self._kill, container)
            if not state and not await blocking(engine_reachable, self.client):
                raise InfrastructureFault(
                    "the engine went away while the job ran (no answer, no container state)"
                ) from None
            return failure_result(
                "timeout",
                f"the evaluation exceeded its {budget:g} s budget",
                duration_s=elapsed(),
                oom_killed=bool(state.get("OOMKilled")),
                stderr_tail=stream.stderr_tail,
            ), False
        except OutputLimitExceeded as exc:
            await blocking(self._kill, container)
            return failure_result(
                "output_limit", str(exc), duration_s=elapsed(), stderr_tail=stream.stderr_tail
            ), False
        except WireError as exc:
            await blocking(self._kill, container)
            return failure_result(
                "invalid_result",
                f"unreadable result: {exc}",
                duration_s=elapsed(),
                stderr_tail=stream.stderr_tail,
            ), False
        except OSError:
            frame = None  # the socket broke: the container is gone
        if frame is None or frame[0].get("kind") != "result":
            return await blocking(self._died, container, stream, elapsed()), False
        return result_from_document(frame[0], duration_s=elapsed()), True

    def _state(self, container: Container, wait_s: float) -> dict[str, Any]:
        with contextlib.suppress(requests.exceptions.RequestException, docker.errors.APIError):
            container.wait(timeout=wait_s)
        try:
            container.reload()
        except (docker.errors.APIError, requests.exceptions.RequestException):
            return {}
        return dict(container.attrs.get("State") or {})

    def _kill(self, container: Container) -> dict[str, Any]:
        with contextlib.suppress(docker.errors.APIError, requests.exceptions.RequestException):
            container.kill()
        return self._state(container, wait_s=10.0)

    def _died(self, container: Container, stream: AttachedStream, duration: float) -> EvalResult:
        state = self._state(container, wait_s=10.0)
        code = state.get("ExitCode")
        if not state:
            raise InfrastructureFault(
                "the container vanished during the job (removed from outside, or the engine "
                "went away)"
            )
        if not state.get("OOMKilled") and code in STOPPED_FROM_OUTSIDE:
            # The candidate runs as another uid without capabilities: it cannot signal the
            # runner.  A SIGKILL/SIGTERM exit without an OOM kill came from outside.
            raise InfrastructureFault(
                f"the container was stopped from outside during the job (exit code {code})"
            )
        if state.get("OOMKilled"):
            return failure_result(
                "oom",
                "the container exceeded its memory limit",
                duration_s=duration,
                exit_code=code,
                oom_killed=True,
                stderr_tail=stream.stderr_tail,
            )
        return failure_result(
            "crash",
            f"the sandbox runner exited (code {code}) without a result",
            duration_s=duration,
            exit_code=code,
            stderr_tail=stream.stderr_tail,
        )
