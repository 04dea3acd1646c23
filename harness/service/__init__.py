"""The self-hosted hub (``galapagos serve``): a FastAPI app over the library functions the CLI
uses — an API under ``/api/v1`` (OpenAPI), live progress by server-sent events, a persistent
run queue, and server-rendered pages — with hashed tokens for every write."""

from __future__ import annotations

from harness.service.app import create_app
from harness.service.settings import ServiceSettings, is_loopback

__all__ = ["ServiceSettings", "create_app", "is_loopback"]
