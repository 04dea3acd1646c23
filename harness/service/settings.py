"""What a hub serves and to whom: the settings ``create_app`` takes (the CLI fills them)."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["ServiceSettings", "is_loopback"]


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and ``localhost``: addresses no other machine can reach."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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
    #: runs, and the key they send, to another endpoint).
    api_base: str | None = None
    models: tuple[str, ...] = ()
    #: Serve cookies with ``Secure`` (behind an HTTPS proxy).
    secure_cookies: bool = False
    #: Where the hub keeps the composition files runs are launched from.
    data_dir: Path | None = None
    #: Project docs shown under /docs (default: the checkout's README.md and docs/).
    docs_dir: Path | None = None
    #: Seconds between polls of the store for runs written by other processes (the CLI).
    poll_s: float = 1.0
    #: A Ray cluster the queue runs on (``--ray-address``; docs/scale-out.md).
    ray_address: str | None = None
    extra: dict[str, str] = field(default_factory=dict)
