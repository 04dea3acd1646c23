"""``Runtime``: what the runs of one process share — every container, LLM endpoints, canaries.

Every run executes on a Runtime (:func:`harness.runs.execute`): a lone ``galapagos run`` is a
Runtime of one, a benchmark's cells and the hub's run workers share one, and on a Ray cluster
each node's actor owns one (:mod:`harness.distributed`).  The Runtime owns every container the
runs start:

- one sandbox backend (and so one warm pool and one orphan reap) per backend shape, with a
  global cap on the containers doing work at once across all runs
  (:class:`~harness.sandbox.capacity.CappedBackend`); a run that ends drops its warm
  containers at once;
- the long-lived sandbox sessions (EvoX strategy servers, :mod:`harness.sandbox.sessions`),
  served from the same backend: same engine connection and outage wait, same images, same
  owner labels for reaping, and the same cap (a session holds a slot while it starts and while
  a request runs);
- the Docker start-up canaries once, before the first container of any kind;
- one HTTP client per LLM endpoint and key, and one offline model server per offline seed and
  fault setting (its answers depend only on the request, so runs can share it); each run keeps
  its own seeded ensemble RNG and budget meter.

Everything is created on first use, in the event loop that runs the runs, and closed by
:meth:`Runtime.aclose`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from harness.core.config import EvaluatorConfig
from harness.llm.config import ResolvedLLM
from harness.llm.usage import UsageMeter
from harness.sandbox.capacity import CappedBackend, SharedSlot
from harness.sandbox.protocol import SandboxBackend
from harness.sandbox.sessions import Session, SessionBackend, SessionSpec

if TYPE_CHECKING:
    from harness.distributed.cluster import Cluster
    from harness.llm._http import Transport
    from harness.llm.client import LLMClient
    from harness.llm.offline import OfflineServer

__all__ = ["Runtime", "default_max_containers"]


def default_max_containers() -> int:
    """Two per core: a container's start is CPU-bound in the engine, its job mostly too."""
    return max(2, 2 * (os.cpu_count() or 1))


def _own_cap(ev: EvaluatorConfig) -> SharedSlot | None:
    return SharedSlot(ev.max_concurrent) if ev.max_concurrent is not None else None


def lone_run_containers() -> int:
    """A lone run's cap (``galapagos run``): one evaluation per core.  Its evaluations are
    mostly CPU-bound, so more at once only slow each other (and stretch each candidate's wall
    clock towards its limit); with parallel iterations they also keep the iterations in step
    (every evaluation of a round shares the cores at once), where one per core staggers them:
    bench/safety_tax.py's parallel section, four iterations on 2 cores, 6.7–7.2 → 6.5–7.0 s."""
    return max(2, os.cpu_count() or 1)


class Runtime:
    """Shared services for the runs of one process (see the module docstring).

    ``max_containers`` caps evaluation containers running jobs at once across every run;
    ``pool_size`` is the warm containers kept per run (a run's config may set its own with
    ``evaluator.pool_size``); by default the cap shared by ``parallel`` concurrent runs.
    With a Ray ``cluster`` the runs' evaluations go to the cluster's nodes instead (each node's
    own Runtime applies its cap, canaries and pool: :mod:`harness.distributed`); strategy
    sessions stay on this machine's engine.
    """

    def __init__(
        self,
        *,
        max_containers: int | None = None,
        parallel: int = 1,
        pool_size: int | None = None,
        cluster: Cluster | None = None,
    ) -> None:
        self.cluster = cluster
        self.max_containers = max_containers or default_max_containers()
        self.pool_size = (
            pool_size if pool_size is not None else max(1, self.max_containers // max(1, parallel))
        )
        self._backends: dict[tuple[Any, ...], SandboxBackend] = {}
        self._slot: SharedSlot | None = None
        self._cluster_slot: SharedSlot | None = None
        self._transports: dict[tuple[Any, ...], Transport] = {}
        self._servers: dict[str, OfflineServer] = {}
        #: The sandbox side's lock and the LLM side's: the sandbox's is held while the start-up
        #: canaries run, and must not hold up the client's set-up, which runs meanwhile.
        self._locks = {"sandbox": asyncio.Lock(), "llm": asyncio.Lock()}
        self._canaries_passed = False
        self.canary_runs = 0
        #: The start-up canaries' results from a run's first zygote container (armed by
        #: :meth:`canaries_in_pool`); None when they run in a container of their own.
        self._in_pool: Future[Any] | None = None
        #: Runs whose first container was asked to run the start-up canaries (for tests).
        self.canaries_in_first_container = 0
        #: Docker session backends handed to runs (strategy servers on the shared engine).
        self.session_backends = 0
        self._closed = False

    def _guard(self, side: str = "sandbox") -> asyncio.Lock:
        if self._closed:
            raise RuntimeError("the shared runtime is closed")
        return self._locks[side]

    # -- sandbox ------------------------------------------------------------------------------
    async def canaries(self) -> None:
        """The Docker start-up canaries, once for the whole runtime (fail closed)."""
        if self._canaries_passed:  # every job asks (CappedBackend.ready): no lock then
            return
        async with self._guard():
            if self._canaries_passed:
                return
            from harness.sandbox.doctor import startup_canaries

            self.canary_runs += 1
            in_pool, self._in_pool = self._in_pool, None
            await startup_canaries(in_pool)
            self._canaries_passed = True

    def canaries_in_pool(self, backend: CappedBackend, image: str) -> None:
        """Have the start-up canaries run as the first jobs of the run's own first zygote
        container (image ``image``, the run's limits and hardening) instead of in a container
        of their own: one container fewer before the first candidate.  Call before the run's
        prewarm; it applies only when nothing ran (or is running) the canaries yet, the image
        is one they run in
        (:func:`~harness.sandbox.doctor.canaries_run_in`) and the backend has zygote boxes;
        otherwise (and whenever they could not run there) the gate runs them as before."""
        from harness.sandbox.docker_backend import DockerBackend
        from harness.sandbox.doctor import canaries_run_in, startup_jobs

        inner = backend.inner
        if (
            self._canaries_passed
            or self.canary_runs
            or self._in_pool is not None
            or backend.gate is None
            or not canaries_run_in(image)
            or not isinstance(inner, DockerBackend)
        ):
            return
        self._in_pool = inner.canaries_first(image, startup_jobs())
        self.canaries_in_first_container += 1

    async def backend(
        self, ev: EvaluatorConfig, run_id: str | None, *, wait_for_canaries: bool = True
    ) -> CappedBackend:
        """A run's handle on the shared backend for ``ev``'s sandbox kind.

        The start-up canaries gate every job of the handle (:meth:`CappedBackend.ready`);
        ``wait_for_canaries=False`` returns it before they passed, so that the caller can
        start its warm containers (no job) meanwhile and await ``ready()`` itself."""
        if self.cluster is not None and ev.sandbox == "docker":
            return await self._cluster_backend(ev, run_id)
        gated = ev.sandbox == "docker" and ev.canaries
        if gated and wait_for_canaries:
            await self.canaries()
        backend, slot = await self._shared(ev, canaries=False)
        return CappedBackend(
            backend, slot, run_id, gate=self.canaries if gated else None, own=_own_cap(ev)
        )

    async def _cluster_backend(self, ev: EvaluatorConfig, run_id: str | None) -> CappedBackend:
        assert self.cluster is not None
        options = {"pool_size": ev.pool_size, "engine_wait_s": ev.engine_wait_s}
        options["canaries"] = ev.canaries
        key: tuple[Any, ...] = ("ray", *sorted(options.items()))
        async with self._guard():
            backend = self._backends.get(key)
            if backend is None:
                backend = self._backends[key] = self.cluster.backend(options)
            if self._cluster_slot is None:
                # The nodes cap their own containers; this only bounds what one driver queues.
                self._cluster_slot = SharedSlot(10_000)
        return CappedBackend(backend, self._cluster_slot, run_id, own=_own_cap(ev))

    async def sessions(self, ev: EvaluatorConfig, run_id: str | None) -> SessionBackend:
        """A run's session backend (EvoX strategy servers) for ``ev``'s sandbox kind: served
        by the same backend as its evaluations, under the same cap.  Opened on first use, so a
        run without sessions (or whose evaluations run on a cluster) starts nothing for them."""
        return _RunSessions(self, ev, run_id, asyncio.get_running_loop())

    async def _sessions(self, ev: EvaluatorConfig, run_id: str | None) -> SessionBackend:
        from harness.sandbox.docker_backend import DockerBackend
        from harness.sandbox.sessions import DockerSessions, LocalSessions

        backend, slot = await self._shared(ev)
        if isinstance(backend, DockerBackend):
            self.session_backends += 1
            return DockerSessions(backend, slot=slot, run_id=run_id)
        return LocalSessions(slot=slot)

    async def _shared(
        self, ev: EvaluatorConfig, *, canaries: bool = True
    ) -> tuple[SandboxBackend, SharedSlot]:
        from harness.sandbox import make_backend

        if canaries and ev.sandbox == "docker" and ev.canaries:
            await self.canaries()
        async with self._guard():
            if self._slot is None:
                self._slot = SharedSlot(self.max_containers)
            pool = ev.pool_size if ev.pool_size is not None else self.pool_size
            key: tuple[Any, ...] = (ev.sandbox,)
            if ev.sandbox == "docker":
                key += (pool, ev.engine_wait_s)
            backend = self._backends.get(key)
            if backend is None:
                options: dict[str, Any] = (
                    {"pool_size": pool, "engine_wait_s": ev.engine_wait_s}
                    if ev.sandbox == "docker"
                    else {}
                )
                # Starting the Docker backend reaps orphans and pings the engine: off the loop.
                backend = await asyncio.to_thread(make_backend, ev.sandbox, **options)
                self._backends[key] = backend
            return backend, self._slot

    async def engine_returned(
        self, run_id: str, stopping: Callable[[], bool], poll_s: float = 1.0
    ) -> bool:
        """After a run stopped because the Docker engine stayed away: wait until the engine
        answers again (False: ``stopping()`` said to give up first), then remove what the
        outage left of the run and clean up every shared backend."""
        import docker
        import docker.errors

        from harness.sandbox.engine import engine_reachable
        from harness.sandbox.ownership import remove_run

        def connect() -> docker.DockerClient | None:
            try:
                return docker.from_env()
            except docker.errors.DockerException:
                return None

        client = await asyncio.to_thread(connect)
        while not stopping():
            if client is not None and await asyncio.to_thread(engine_reachable, client):
                break
            if client is None:
                client = await asyncio.to_thread(connect)
            await asyncio.sleep(poll_s)
        else:
            return False
        # What the outage left of this run (containers the engine could not remove while it
        # was away): this process owns them, so no start-up reap would take them.
        await asyncio.to_thread(remove_run, client, run_id)
        await asyncio.to_thread(self.engine_back)
        return True

    def engine_back(self) -> None:
        """After an engine outage that stopped runs: every shared Docker backend re-checks its
        images, drops dead warm containers and removes what the outage left (blocking)."""
        for backend in list(self._backends.values()):
            recover = getattr(backend, "engine_back", None)
            if recover is not None:
                recover()

    @property
    def backends(self) -> list[SandboxBackend]:
        """The shared backends opened so far (one per sandbox kind and pool shape)."""
        return list(self._backends.values())

    @property
    def containers_created(self) -> int:
        """Evaluation containers the shared Docker backends created so far."""
        return sum(len(getattr(b, "history", ())) for b in self._backends.values())

    @property
    def peak_jobs(self) -> int:
        """The most evaluation jobs that ran at once."""
        return self._slot.peak if self._slot else 0

    # -- LLM ----------------------------------------------------------------------------------
    async def llm(
        self, settings: ResolvedLLM, *, rng: random.Random, meter: UsageMeter
    ) -> LLMClient:
        """A run's client (its own RNG and meter) over the endpoint's shared HTTP client."""
        # Imported here, not with the module: the HTTP stack (≈35 ms) loads after a run has
        # asked for its first container, while the engine starts it.
        from harness.llm.client import LLMClient, make_transport

        async with self._guard("llm"):
            if settings.provider == "offline":
                key = f"{settings.offline.seed}:{settings.offline.faults!r}"
                server = self._servers.get(key)
                if server is None:
                    from harness.llm.offline import start_offline_server

                    server = await asyncio.to_thread(
                        start_offline_server,
                        seed=settings.offline.seed,
                        faults=settings.offline.faults,
                    )
                    self._servers[key] = server
                settings = _with_endpoint(settings, server.base_url)
            ident = (settings.provider, settings.api_base, settings.api_key, settings.timeout_s)
            transport = self._transports.get(ident)
            if transport is None:
                transport = make_transport(settings)
                self._transports[ident] = transport
        return LLMClient(settings, rng=rng, meter=meter, transport=transport)

    @property
    def endpoints(self) -> int:
        """LLM HTTP clients opened (one per endpoint and key)."""
        return len(self._transports)

    # -- lifecycle ----------------------------------------------------------------------------
    async def aclose(self) -> None:
        """Close every backend (removing its containers), HTTP client and offline server."""
        self._closed = True
        backends, self._backends = list(self._backends.values()), {}
        transports, self._transports = list(self._transports.values()), {}
        servers, self._servers = list(self._servers.values()), {}
        for backend in backends:
            await backend.aclose()
        for transport in transports:
            await transport.aclose()
        for server in servers:
            await asyncio.to_thread(server.close)

    async def __aenter__(self) -> Runtime:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class _RunSessions:
    """A run's session backend, made by its Runtime when the first session starts."""

    def __init__(
        self,
        runtime: Runtime,
        ev: EvaluatorConfig,
        run_id: str | None,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        self.kind: str = ev.sandbox
        self._runtime, self._ev, self._run_id, self._loop = runtime, ev, run_id, loop
        self._inner: SessionBackend | None = None

    async def _get(self) -> SessionBackend:
        if self._inner is None:
            self._inner = await self._runtime._sessions(self._ev, self._run_id)
        return self._inner

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        inner = await self._get()
        async with inner.slot():
            yield

    def open(self, spec: SessionSpec) -> Session:
        inner = self._inner
        if inner is None:  # called from a session's own thread, off the Runtime's loop
            inner = asyncio.run_coroutine_threadsafe(self._get(), self._loop).result()
        return inner.open(spec)

    def recover(self, why: str) -> None:
        if self._inner is not None:
            self._inner.recover(why)

    def close(self) -> None:
        if self._inner is not None:
            self._inner.close()


def _with_endpoint(settings: ResolvedLLM, base_url: str) -> ResolvedLLM:
    import dataclasses

    return dataclasses.replace(settings, api_base=base_url, api_key="offline")
