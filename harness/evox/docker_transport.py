"""``DockerTransport``: one long-lived hardened container per strategy, RPC over its attach socket.

The container is made by the sandbox's :func:`create_hardened_container` (no network, read-only
root + tmpfs, ``cap_drop=ALL`` and no capability added back, ``no-new-privileges``, memory =
swap limit, pids and CPU limits, no log driver, tini as PID 1) and runs as ``nobody``; it is
labelled with the owner process and the run so orphans are reaped.  The host's deadline per
call kills the container; a container that stops answering (EOF) is classified by Docker's
``OOMKilled`` flag.  A container that vanished, or was stopped from outside (exit 137/143 without
an OOM kill: the strategy runs as ``nobody`` and cannot signal its server), or that could not
start because the engine is unreachable, is an :class:`~harness.core.errors.InfrastructureFault`:
not the strategy's failure (the caller restarts it and replays its calls).

Start-up ships our own server code when the image lacks it: a short bootstrap (``-c``) reports a
digest of the strategy server and shims it finds in the image; if that differs from this
checkout's files, the host sends them in one frame and the bootstrap puts them first on
``sys.path`` (in the container's tmpfs).  A stale or older image therefore still runs the
server this host speaks to.
"""

from __future__ import annotations

import contextlib
import hashlib
import uuid
from pathlib import Path
from typing import Any

import docker
import docker.errors
import requests.exceptions
from docker.models.containers import Container
from galapagos_sandbox.wire import WireError, encode_frame

from harness.core.errors import (
    InfrastructureFault,
    SandboxError,
    SandboxUnavailable,
    StrategyError,
)
from harness.evox.transport import MAX_RESPONSE, ThreadedTransport
from harness.sandbox import _runtime, images, ownership
from harness.sandbox.attach import AttachedStream
from harness.sandbox.engine import engine_reachable
from harness.sandbox.hardening import ContainerSpec, create_hardened_container, minimal_env
from harness.sandbox.protocol import Limits
from harness.sandbox.usage import container_meter

__all__ = ["BOOT", "DockerTransport", "server_files"]

NOBODY = "65534:65534"
INSTANCE_LABEL = "galapagos.strategy"

#: Bootstrap run with ``python3 -P -s -c BOOT <runtime dir> <compat dir>`` (trusted code).
BOOT = r"""
import hashlib, os, sys, types
runtime, compat = sys.argv[1], sys.argv[2]
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
from galapagos_strategy.server import main
main()
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


def server_digest() -> str:
    """Same digest as the bootstrap computes over the image's copies."""
    h = hashlib.sha256()
    for rel, path in server_files():
        h.update(rel.split("/", 1)[1].encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def _package_frame() -> bytes:
    entries, parts, offset = [], [], 0
    for rel, path in server_files():
        data = path.read_bytes()
        entries.append([rel, offset, len(data)])
        parts.append(data)
        offset += len(data)
    return encode_frame({"kind": "package", "files": entries}, b"".join(parts))


class DockerTransport(ThreadedTransport):
    name = "docker"

    def __init__(
        self,
        client: docker.DockerClient,
        *,
        image: str,
        limits: Limits,
        run_id: str | None = None,
        runtime: str | None = None,
    ) -> None:
        super().__init__()
        self.client = client
        self.image = image
        self.limits = limits
        self.run_id = run_id
        self.runtime = runtime
        self.instance = uuid.uuid4().hex[:12]
        self.container: Container | None = None
        self.stream: AttachedStream | None = None
        self.shipped = False

    def _labels(self) -> dict[str, str]:
        labels = {
            ownership.LABEL: "1",
            ownership.OWNER_LABEL: ownership.owner_id(),
            ownership.ROLE_LABEL: "strategy",
            INSTANCE_LABEL: self.instance,
        }
        if self.run_id:
            labels[ownership.RUN_LABEL] = self.run_id
        return labels

    def _start_sync(self, deadline: float) -> None:
        pythonpath = f"{images.RUNTIME}:{images.COMPAT}:{images.SITE}"
        spec = ContainerSpec(
            image=self.image,
            command=("/usr/bin/python3", "-P", "-s", "-c", BOOT, images.RUNTIME, images.COMPAT),
            limits=self.limits,
            labels=self._labels(),
            env=minimal_env(pythonpath=pythonpath) | {"PYTHONHASHSEED": "0"},
            name=f"galapagos-strategy-{self.instance}",
            cap_add=(),
            user=NOBODY,
            runtime=self.runtime,
        )
        try:
            self.container = create_hardened_container(self.client, spec)
        except SandboxError as exc:
            if isinstance(exc, SandboxUnavailable) or not engine_reachable(self.client):
                raise InfrastructureFault(f"could not create a strategy container: {exc}") from exc
            raise
        try:
            self._boot(deadline)
        except BaseException as exc:
            self._close_sync()
            if isinstance(exc, InfrastructureFault):
                raise
            if not engine_reachable(self.client):
                raise InfrastructureFault(
                    f"the engine went away while a strategy container started: {exc}"
                ) from exc
            if isinstance(exc, TimeoutError | WireError | OSError):
                raise StrategyError(
                    f"the strategy container did not start: {exc}", kind="crash"
                ) from exc
            if isinstance(exc, docker.errors.APIError | requests.exceptions.RequestException):
                raise SandboxError(f"the Docker engine failed to start a strategy: {exc}") from exc
            raise

    def _boot(self, deadline: float) -> None:
        assert self.container is not None
        self.stream = AttachedStream.open(self.client, self.container, max_frame=MAX_RESPONSE)
        self.container.start()
        self.container.reload()  # State.Pid: where the meter finds the container's cgroup
        self.meter = container_meter(self.container)
        hello = self._recv(deadline)
        if hello is None or hello.get("kind") != "hello":
            raise self._die(self._death_sync())
        self.shipped = hello.get("digest") != server_digest()
        payload = _package_frame() if self.shipped else encode_frame({"kind": "package"})
        self.stream.reset_output_budget()
        self.stream.send(payload, deadline)
        ready = self._recv(deadline)
        if ready is None or ready.get("kind") != "ready":
            raise self._die(self._death_sync())

    def _recv(self, deadline: float) -> dict[str, Any] | None:
        assert self.stream is not None
        frame = self.stream.recv_frame(deadline)
        return None if frame is None else frame[0]

    def _call_sync(self, request: dict[str, Any], deadline: float) -> dict[str, Any] | None:
        assert self.stream is not None
        self.stream.reset_output_budget()  # before sending: the answer may arrive at once
        self.stream.send(encode_frame(request), deadline)
        return self._recv(deadline)

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

    def _death_sync(self) -> StrategyError:
        state = self._state(wait_s=10.0)
        tail = self.stream.stderr_tail[-500:] if self.stream else ""
        if not state:
            raise InfrastructureFault(
                "the strategy container vanished (removed from outside, or the engine went away)"
            )
        if not state.get("OOMKilled") and state.get("ExitCode") in (137, 143):
            raise InfrastructureFault(
                f"the strategy container was stopped from outside (exit code {state['ExitCode']})"
            )
        if state.get("OOMKilled"):
            return StrategyError("the strategy container exceeded its memory limit", kind="oom")
        return StrategyError(
            f"the strategy container exited (code {state.get('ExitCode')}): {tail}", kind="crash"
        )

    def _kill_sync(self) -> None:
        if self.container is not None:
            with contextlib.suppress(docker.errors.APIError, requests.exceptions.RequestException):
                self.container.kill()

    def _close_sync(self) -> None:
        if self.stream is not None:
            self.stream.close()
        if self.container is not None:
            ownership.remove_containers([self.container])
            return
        # A create whose answer was lost (the engine went down mid-request) may still have
        # made the container: find it by this transport's label.
        with contextlib.suppress(docker.errors.APIError, requests.exceptions.RequestException):
            lost = self.client.containers.list(
                all=True,
                ignore_removed=True,
                filters={"label": f"{INSTANCE_LABEL}={self.instance}"},
            )
            ownership.remove_containers(lost)


def docker_client() -> docker.DockerClient:
    try:
        client = docker.from_env(timeout=120)
        client.ping()
    except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
        raise SandboxUnavailable(
            f"the Docker engine is not reachable ({exc}); start it with "
            "`bash scripts/docker-engine.sh`"
        ) from exc
    return client
