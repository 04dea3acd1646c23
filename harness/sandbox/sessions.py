"""Sessions: long-lived servers from the shipped runtime, each in its own sandbox, one channel each.

An evaluation job is one request in a fresh container (:mod:`harness.sandbox.docker_backend`);
a *session* is a server that lives across many requests — today an EvoX strategy server
(``galapagos_strategy.server``).  Both kinds of container belong to the same owner: a
:class:`SessionBackend` is handed out by the :class:`~harness.runtime.Runtime`, which serves it
from the same Docker backend as the evaluations (one engine client, one wait per engine outage,
the same images by content hash, the owner labels that orphan reaping reads) and under the same
container cap (a session holds a slot while it starts and while a request runs; an idle one
holds none), after the same start-up canaries.

- :class:`DockerSessions` — a hardened container per session (no network, read-only root +
  tmpfs, ``cap_drop=ALL`` and nothing added back, ``no-new-privileges``, memory = swap limit,
  pids and CPU limits, tini as PID 1), run as ``nobody``, labelled with owner, run and role.
- :class:`LocalSessions` — UNSAFE host subprocesses (rlimits only), for machines without
  Docker (an explicit ``evaluator.sandbox: local``) and tests of trusted fixtures.

Every session starts the same bootstrap (:data:`BOOT`): it reports a digest of the server code
it finds in the image; when that differs from this host's files (a stale or older image), the
host sends them in one frame and the bootstrap puts them first on ``sys.path``.  A stale image
therefore still runs the server this host speaks to.

A :class:`Session` is blocking and used from one thread at a time (its caller's private
thread), except :meth:`Session.kill`, which any thread may call.  Infrastructure faults (the
engine away, the container removed or stopped from outside) are
:class:`~harness.core.errors.InfrastructureFault`; how a server died is plain data
(:class:`SessionExit`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import resource
import signal
import subprocess
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import docker.errors
import requests.exceptions
from galapagos_sandbox.wire import WireError, encode_frame, read_frame, write_all

from harness.core.errors import InfrastructureFault, SandboxError, SandboxUnavailable
from harness.sandbox import _runtime, images, ownership
from harness.sandbox.attach import AttachedStream
from harness.sandbox.engine import engine_reachable
from harness.sandbox.hardening import ContainerSpec, create_hardened_container, minimal_env
from harness.sandbox.protocol import Limits
from harness.sandbox.usage import Meter, ProcMeter, container_meter

if TYPE_CHECKING:
    from harness.sandbox.capacity import SharedSlot
    from harness.sandbox.docker_backend import DockerBackend

__all__ = [
    "BOOT",
    "DockerSessions",
    "LocalSessions",
    "Session",
    "SessionBackend",
    "SessionExit",
    "SessionSpec",
    "make_sessions",
    "server_digest",
    "server_files",
    "server_source",
]

#: Largest frame accepted from a session server.
MAX_FRAME = 4 << 20
NOBODY = "65534:65534"
INSTANCE_LABEL = "galapagos.session"
STDERR_KEEP = 4000

#: Bootstrap run with ``python3 -P -s -c BOOT <runtime dir> <compat dir> <server module>``.
BOOT = r"""
import hashlib, importlib, os, sys, types
runtime, compat, server = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path[:0] = [runtime, compat]
from galapagos_sandbox.wire import encode_frame, read_frame, write_all
h = hashlib.sha256()
for root, sub in ((runtime, "galapagos_strategy"), (compat, "skydiscover/search")):
    base = os.path.join(root, sub)
    for name in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        if name.endswith(".py"):
            h.update(f"{sub}/{name}".encode() + b"\0")
            with open(os.path.join(base, name), "rb") as f:
                h.update(hashlib.sha256(f.read()).digest())
write_all(1, encode_frame({"kind": "hello", "digest": h.hexdigest()}))
frame = read_frame(0, max_frame=16 << 20)
if frame is None:
    os._exit(0)
header, blob = frame
top = "/tmp/galapagos-strategy"
for rel, offset, size in header.get("files") or []:
    path = os.path.join(top, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(blob[offset:offset + size])
if header.get("files"):
    sys.path.insert(0, os.path.join(top, "runtime"))
    try:
        import skydiscover
    except ImportError:
        skydiscover = sys.modules["skydiscover"] = types.ModuleType("skydiscover")
        skydiscover.__path__ = []
    skydiscover.__path__.insert(0, os.path.join(top, "compat", "skydiscover"))
importlib.import_module(server).main()
"""


def server_files() -> list[tuple[str, Path]]:
    """(path in the shipped tree, host file) for the server package and the shims, sorted."""
    out = []
    for root, prefix, sub in (
        (_runtime.RUNTIME_DIR, "runtime", "galapagos_strategy"),
        (_runtime.COMPAT_DIR, "compat", "skydiscover/search"),
    ):
        for path in sorted((root / sub).glob("*.py")):
            out.append((f"{prefix}/{sub}/{path.name}", path))
    return out


def server_source(rel: str) -> str:
    """The text of a file of the shipped runtime (``galapagos_strategy/seed_strategy.py``)."""
    return (_runtime.RUNTIME_DIR / rel).read_text()


def server_digest() -> str:
    """Same digest as the bootstrap computes over the image's copies."""
    h = hashlib.sha256()
    for rel, path in server_files():
        h.update(rel.split("/", 1)[1].encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def _package_frame(ship: bool) -> bytes:
    if not ship:
        return encode_frame({"kind": "package"})
    entries, parts, offset = [], [], 0
    for rel, path in server_files():
        data = path.read_bytes()
        entries.append([rel, offset, len(data)])
        parts.append(data)
        offset += len(data)
    return encode_frame({"kind": "package", "files": entries}, b"".join(parts))


@dataclass(frozen=True)
class SessionSpec:
    """What a session runs and under which limits (``wall_s`` bounds its start-up)."""

    limits: Limits
    #: The server module in the shipped runtime.
    server: str = "galapagos_strategy.server"
    #: Image name (a key of ``sandbox_images/``), ignored by local sessions.
    image: str = "python-eval"
    #: The run the session belongs to (labels its container, so the run's clean-up finds it).
    run_id: str | None = None
    #: The container's ``galapagos.role`` label.
    role: str = "strategy"
    #: Extra environment (never secrets).
    env: dict[str, str] = field(default_factory=lambda: {"PYTHONHASHSEED": "0"})


@dataclass(frozen=True)
class SessionExit:
    """How a session's server ended."""

    oom: bool
    code: int | None
    stderr_tail: str


class Session(Protocol):
    """One running server and its framed channel (see the module docstring)."""

    #: Resource readings of the server from outside it (None before it started).
    meter: Meter | None
    #: Whether the host had to send the server code (the image's copy differed).
    shipped: bool

    def boot(self, deadline: float) -> bool:
        """Start the server (bootstrap and code shipping); False when it ended first."""
        ...

    def send(self, data: bytes, deadline: float) -> None: ...

    def recv(self, deadline: float) -> dict[str, Any] | None:
        """The next frame's header; None at end of stream (the server is gone)."""
        ...

    def reset_output_budget(self) -> None: ...

    def kill(self) -> None: ...

    def exit(self, wait_s: float) -> SessionExit:
        """Why the server ended; :class:`InfrastructureFault` when it did not end by itself."""
        ...

    def close(self) -> None:
        """Stop the server and remove its sandbox."""
        ...


class SessionBackend(Protocol):
    """Opens sessions; served by a Runtime, or made alone by :func:`make_sessions`."""

    kind: str

    def open(self, spec: SessionSpec) -> Session:
        """A new session, not yet booted (blocking; raises on infrastructure faults)."""
        ...

    def slot(self) -> contextlib.AbstractAsyncContextManager[None]:
        """Held while a session starts and while a request runs (the container cap)."""
        ...

    def recover(self, why: str) -> None:
        """After an infrastructure fault: wait (bounded) until sessions can start again;
        raises :class:`~harness.core.errors.EngineUnavailable` past the deadline."""
        ...

    def close(self) -> None: ...


@asynccontextmanager
async def _no_slot() -> AsyncIterator[None]:
    yield


# -- Docker ------------------------------------------------------------------------------------


class DockerSessions:
    """Sessions in hardened containers on a :class:`DockerBackend`'s engine (see the module
    docstring); ``slot`` is the Runtime's container cap (None: uncapped)."""

    kind = "docker"

    def __init__(
        self,
        backend: DockerBackend,
        *,
        slot: SharedSlot | None = None,
        run_id: str | None = None,
        owns_backend: bool = False,
    ) -> None:
        self.backend = backend
        self._slot = slot
        self.run_id = run_id
        self._owns_backend = owns_backend
        #: Sessions opened so far (for the Runtime's accounting).
        self.opened = 0

    def open(self, spec: SessionSpec) -> Session:
        if self._owns_backend and self.backend._closed:
            # A standalone backend closed by an earlier user (a run's end): open it anew.
            from harness.sandbox.docker_backend import DockerBackend

            self.backend = DockerBackend(pool_size=0, engine_wait_s=self.backend.engine_wait_s)
        self.opened += 1
        return DockerSession(self.backend, spec, spec.run_id or self.run_id)

    def slot(self) -> contextlib.AbstractAsyncContextManager[None]:
        return self._slot if self._slot is not None else _no_slot()

    def recover(self, why: str) -> None:
        # Shared with the evaluations: one wait per outage, after which the backend looks its
        # images up (and rebuilds a lost one) again.
        self.backend.engine.wait(why)

    def close(self) -> None:
        if self._owns_backend:
            self.backend.close()


class DockerSession:
    def __init__(self, backend: DockerBackend, spec: SessionSpec, run_id: str | None) -> None:
        self.backend = backend
        self.client = backend.client
        self.spec = spec
        self.instance = uuid.uuid4().hex[:12]
        self.meter: Meter | None = None
        self.shipped = False
        self.stream: AttachedStream | None = None
        labels = {
            ownership.LABEL: "1",
            ownership.OWNER_LABEL: backend.owner,
            ownership.BACKEND_LABEL: backend.instance,
            ownership.ROLE_LABEL: spec.role,
            INSTANCE_LABEL: self.instance,
        }
        if run_id:
            labels[ownership.RUN_LABEL] = run_id
        try:
            image = backend.image_tag(spec.image)
        except SandboxError as exc:
            if isinstance(exc, InfrastructureFault) or not engine_reachable(self.client):
                raise InfrastructureFault(f"could not look up the session image: {exc}") from exc
            raise
        pythonpath = f"{images.RUNTIME}:{images.COMPAT}:{images.SITE}"
        self._container_spec = ContainerSpec(
            image=image,
            command=(
                "/usr/bin/python3",
                "-P",
                "-s",
                "-c",
                BOOT,
                images.RUNTIME,
                images.COMPAT,
                spec.server,
            ),
            limits=spec.limits,
            labels=labels,
            env=minimal_env(pythonpath=pythonpath) | spec.env,
            name=f"galapagos-session-{self.instance}",
            cap_add=(),
            user=NOBODY,
            runtime=backend.runtime,
        )
        self.container: Any = None

    def boot(self, deadline: float) -> bool:
        try:
            self.container = create_hardened_container(self.client, self._container_spec)
        except SandboxError as exc:
            if isinstance(exc, SandboxUnavailable):  # the image is gone: look it up again
                self.backend._forget_image(self._container_spec.image)
            if isinstance(exc, SandboxUnavailable) or not engine_reachable(self.client):
                raise InfrastructureFault(f"could not create a session container: {exc}") from exc
            raise
        try:
            self.stream = AttachedStream.open(self.client, self.container, max_frame=MAX_FRAME)
            self.container.start()
            self.container.reload()  # State.Pid: where the meter finds the container's cgroup
            self.meter = container_meter(self.container)
            hello = self.recv(deadline)
            if hello is None or hello.get("kind") != "hello":
                return False
            self.shipped = hello.get("digest") != server_digest()
            self.reset_output_budget()
            self.send(_package_frame(self.shipped), deadline)
            return True
        except BaseException as exc:
            self.close()
            if isinstance(exc, InfrastructureFault):
                raise
            if not engine_reachable(self.client):
                raise InfrastructureFault(
                    f"the engine went away while a session container started: {exc}"
                ) from exc
            if isinstance(exc, docker.errors.APIError | requests.exceptions.RequestException):
                raise SandboxError(f"the Docker engine failed to start a session: {exc}") from exc
            raise

    def send(self, data: bytes, deadline: float) -> None:
        assert self.stream is not None, "boot() first"
        self.stream.send(data, deadline)

    def recv(self, deadline: float) -> dict[str, Any] | None:
        assert self.stream is not None, "boot() first"
        frame = self.stream.recv_frame(deadline)
        return None if frame is None else frame[0]

    def reset_output_budget(self) -> None:
        assert self.stream is not None, "boot() first"
        self.stream.reset_output_budget()

    @property
    def stderr_tail(self) -> str:
        return str(self.stream.stderr_tail) if self.stream is not None else ""

    def _state(self, wait_s: float) -> dict[str, Any]:
        if self.container is None:
            return {}
        with contextlib.suppress(requests.exceptions.RequestException, docker.errors.APIError):
            self.container.wait(timeout=wait_s)
        try:
            self.container.reload()
        except (docker.errors.APIError, requests.exceptions.RequestException):
            return {}
        return dict(self.container.attrs.get("State") or {})

    def exit(self, wait_s: float) -> SessionExit:
        state = self._state(wait_s)
        if not state:
            raise InfrastructureFault(
                "the session container vanished (removed from outside, or the engine went away)"
            )
        code = state.get("ExitCode")
        if not state.get("OOMKilled") and code in (137, 143):
            # The server runs as nobody without capabilities: it cannot signal itself out.
            raise InfrastructureFault(
                f"the session container was stopped from outside (exit code {code})"
            )
        return SessionExit(bool(state.get("OOMKilled")), code, self.stderr_tail[-500:])

    def kill(self) -> None:
        if self.container is not None:
            with contextlib.suppress(docker.errors.APIError, requests.exceptions.RequestException):
                self.container.kill()

    def close(self) -> None:
        if self.stream is not None:
            self.stream.close()
        if self.container is not None:
            ownership.remove_containers([self.container])
            return
        # A create whose answer was lost (the engine went down mid-request) may still have
        # made the container: find it by this session's label.
        with contextlib.suppress(docker.errors.APIError, requests.exceptions.RequestException):
            lost = self.client.containers.list(
                all=True,
                ignore_removed=True,
                filters={"label": f"{INSTANCE_LABEL}={self.instance}"},
            )
            ownership.remove_containers(lost)


# -- local (UNSAFE) ----------------------------------------------------------------------------


def _limit_memory(memory_mb: int) -> Callable[[], None]:
    def preexec() -> None:
        limit = memory_mb << 20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return preexec


class LocalSessions:
    """UNSAFE: sessions as host subprocesses (rlimits only, no isolation from this machine)."""

    kind = "local"

    def __init__(self, *, slot: SharedSlot | None = None, python: str | None = None) -> None:
        self._slot = slot
        self.python = python or sys.executable
        self.opened = 0

    def open(self, spec: SessionSpec) -> Session:
        self.opened += 1
        return LocalSession(spec, self.python)

    def slot(self) -> contextlib.AbstractAsyncContextManager[None]:
        return self._slot if self._slot is not None else _no_slot()

    def recover(self, why: str) -> None:
        return None  # a local subprocess has no engine to wait for

    def close(self) -> None:
        return None


class LocalSession:
    def __init__(self, spec: SessionSpec, python: str) -> None:
        self.spec = spec
        self.python = python
        self.proc: subprocess.Popen[bytes] | None = None
        self.meter: Meter | None = None
        self.shipped = False
        self._stderr = tempfile.TemporaryFile()

    def boot(self, deadline: float) -> bool:
        path = f"{_runtime.RUNTIME_DIR}{os.pathsep}{_runtime.COMPAT_DIR}"
        env = minimal_env(pythonpath=path, home=tempfile.gettempdir()) | self.spec.env
        self.proc = subprocess.Popen(  # noqa: S603 - our own bootstrap, fixed argv
            [
                self.python,
                "-P",
                "-s",
                "-c",
                BOOT,
                str(_runtime.RUNTIME_DIR),
                str(_runtime.COMPAT_DIR),
                self.spec.server,
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
            start_new_session=True,
            preexec_fn=_limit_memory(self.spec.limits.memory_mb),
        )
        assert self.proc.stdin is not None
        os.set_blocking(self.proc.stdin.fileno(), False)
        self.meter = ProcMeter(self.proc.pid, memory_limit=self.spec.limits.memory_mb << 20)
        try:
            hello = self.recv(deadline)
            if hello is None or hello.get("kind") != "hello":
                return False
            self.shipped = hello.get("digest") != server_digest()
            self.send(_package_frame(self.shipped), deadline)
            return True
        except (TimeoutError, WireError, OSError):
            self.kill()
            raise

    def send(self, data: bytes, deadline: float) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        write_all(self.proc.stdin.fileno(), data, deadline)

    def recv(self, deadline: float) -> dict[str, Any] | None:
        assert self.proc is not None and self.proc.stdout is not None
        frame = read_frame(self.proc.stdout.fileno(), max_frame=MAX_FRAME, deadline=deadline)
        return None if frame is None else frame[0]

    def reset_output_budget(self) -> None:
        return None  # stderr goes to a file; stdout is read frame by frame

    def _stderr_tail(self) -> str:
        with contextlib.suppress(OSError):
            size = self._stderr.seek(0, os.SEEK_END)
            self._stderr.seek(max(0, size - STDERR_KEEP))
            return self._stderr.read().decode("utf-8", "replace")
        return ""

    def exit(self, wait_s: float) -> SessionExit:
        code = None
        if self.proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = self.proc.wait(timeout=wait_s)
        tail = self._stderr_tail()
        return SessionExit("MemoryError" in tail, code, tail[-500:])

    def kill(self) -> None:
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5.0)

    def close(self) -> None:
        self.kill()
        if self.proc is not None:
            for stream in (self.proc.stdin, self.proc.stdout):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
        self._stderr.close()


def make_sessions(kind: str = "docker", *, engine_wait_s: float | None = None) -> SessionBackend:
    """Sessions outside any Runtime (``galapagos strategy validate``, tests): ``docker`` opens
    its own engine connection (no warm pool; it reaps orphans as any backend does), ``local``
    runs host subprocesses (UNSAFE)."""
    if kind == "local":
        return LocalSessions()
    if kind != "docker":
        raise SandboxError(f"unknown session backend {kind!r}; valid choices: docker, local")
    from harness.sandbox.docker_backend import ENGINE_WAIT_S, DockerBackend

    wait = ENGINE_WAIT_S if engine_wait_s is None else engine_wait_s
    return DockerSessions(DockerBackend(pool_size=0, engine_wait_s=wait), owns_backend=True)
