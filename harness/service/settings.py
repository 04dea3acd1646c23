"""What a hub serves and to whom: the settings ``create_app`` takes (the CLI fills them)."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["LOOPBACK_NAMES", "ServiceSettings", "host_name", "is_loopback"]

#: Host names that reach only this machine: always accepted in a request's Host header.
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and ``localhost``: addresses no other machine can reach."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def host_name(netloc: str) -> str:
    """The lower-case host of ``host[:port]`` or ``[v6]:port`` (no port, no brackets)."""
    netloc = netloc.strip().lower()
    if netloc.startswith("["):
        return netloc[1:].split("]", 1)[0]
    if netloc.count(":") == 1:
        return netloc.split(":", 1)[0]
    return netloc


@dataclass(frozen=True)
class ServiceSettings:
    """Settings of one hub (all have safe defaults)."""

    #: Folders whose task folders the hub may run (the shipped tasks are always included).
    task_roots: tuple[Path, ...] = ()
    #: Read-only pages and API without a token (writes always need one).
    public_read: bool = True
    #: Runs executing at once (the rest wait in the queue).
    workers: int = 2
    #: Largest request body accepted (bytes); bigger is answered 413.
    max_body_bytes: int = 1 << 20
    #: Seconds a running run gets to finish its iteration in flight on shutdown before it is
    #: cancelled (it is resumed when the hub starts again either way).
    shutdown_grace_s: float = 3.0
    #: Allow runs with ``evaluator.sandbox=local`` (host subprocesses: unsafe for LLM code).
    allow_local_sandbox: bool = False
    #: The endpoint runs use unless the operator says otherwise (API clients cannot redirect
    #: runs, and the key they send, to another endpoint).  It may carry credentials: the hub
    #: stores and shows it redacted, and hands the full URL only to the runs' HTTP client.
    api_base: str | None = None
    models: tuple[str, ...] = ()
    #: Serve cookies with ``Secure`` (HTTPS, or behind an HTTPS proxy).
    secure_cookies: bool = False
    #: Where the hub keeps the composition files runs are launched from.
    data_dir: Path | None = None
    #: Project docs shown under /docs (default: the checkout's README.md and docs/).
    docs_dir: Path | None = None
    #: Seconds between polls of the store for runs written by other processes (the CLI).
    poll_s: float = 1.0
    #: A Ray cluster the queue runs on (``--ray-address``; docs/scale-out.md).
    ray_address: str | None = None
    #: Names the hub answers to besides loopback (its public DNS name behind a proxy, the
    #: address it is bound to).  A request whose Host header is none of these and no loopback
    #: name is refused (DNS rebinding), and a browser write must come from one of them.
    public_names: tuple[str, ...] = ()
    #: A login session ends this long after it began, or after this long unused (seconds).
    session_ttl_s: float = 7 * 86400
    session_idle_s: float = 12 * 3600
    #: Runs one token may have queued or running at once (429 beyond).
    max_queued_per_token: int = 20
    #: Live streams one client (a token, else an address) may hold open, and all together.
    max_streams_per_client: int = 8
    max_streams: int = 1000
    #: Read-only store connections shared by every request (the pool's size).
    reader_connections: int = 4
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def allowed_hosts(self) -> frozenset[str]:
        """Host names a request may name (lower case, no port)."""
        return frozenset([*LOOPBACK_NAMES, *(host_name(n) for n in self.public_names)])
