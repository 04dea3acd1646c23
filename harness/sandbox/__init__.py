"""Sandbox: runs untrusted candidate programs in locked-down containers.

Public surface (heavy modules load on first use):

- :class:`Job`, :class:`Limits`, :class:`SandboxBackend` — the seam (plain data in, EvalResult out)
- :func:`make_backend` — ``"docker"`` (default) or ``"local"`` (unsafe, explicit opt-in)
- :class:`DockerBackend`, :class:`LocalBackend`, :class:`WarmPool`
- :func:`create_hardened_container`, :class:`ContainerSpec`, :class:`AttachedStream` — reusable
  hardening and attach-socket framing (EvoX strategy containers use them too)
- :func:`build_images`, :func:`image_tag` — content-addressed image recipes
- :func:`reap_orphans`, :func:`owner_id` — labels and orphan reaping
- :class:`SessionBackend`, :class:`SessionSpec`, :func:`make_sessions` — long-lived servers
  (EvoX strategies) in their own sandboxes, served by the Runtime like evaluations
"""

from __future__ import annotations

import importlib
from typing import Any

from harness.sandbox import _runtime  # noqa: F401  (puts galapagos_sandbox on sys.path first)
from harness.sandbox.backends import BACKENDS, make_backend
from harness.sandbox.protocol import Job, Limits, SandboxBackend

__all__ = [
    "BACKENDS",
    "AttachedStream",
    "ContainerSpec",
    "DockerBackend",
    "Job",
    "Limits",
    "LocalBackend",
    "SandboxBackend",
    "SessionBackend",
    "SessionSpec",
    "WarmPool",
    "build_images",
    "create_hardened_container",
    "image_tag",
    "make_backend",
    "make_sessions",
    "owner_id",
    "reap_orphans",
]

_LAZY = {
    "AttachedStream": "harness.sandbox.attach",
    "ContainerSpec": "harness.sandbox.hardening",
    "create_hardened_container": "harness.sandbox.hardening",
    "DockerBackend": "harness.sandbox.docker_backend",
    "LocalBackend": "harness.sandbox.local_backend",
    "WarmPool": "harness.sandbox.pool",
    "build_images": "harness.sandbox.images",
    "image_tag": "harness.sandbox.images",
    "owner_id": "harness.sandbox.ownership",
    "reap_orphans": "harness.sandbox.ownership",
    "SessionBackend": "harness.sandbox.sessions",
    "SessionSpec": "harness.sandbox.sessions",
    "make_sessions": "harness.sandbox.sessions",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'harness.sandbox' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
