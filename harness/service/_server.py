"""How ``galapagos serve`` runs the app: uvicorn with a deadline on reading each request, a cap
on connections, enough file descriptors for them, and logs with credentials redacted.

uvicorn closes idle keep-alive connections (``timeout_keep_alive``) but gives a connection
that never finishes its request head — or never sends a byte — all the time it wants (the
slow-loris attack).  :func:`protocol` is its h11 protocol with a deadline: a request's head
and body must arrive within ``read_timeout_s`` of the connection opening or of its first byte
after an idle keep-alive; past it the connection is closed.
"""

from __future__ import annotations

import asyncio
import logging
import resource

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from harness.core.redact import redact_text

__all__ = ["RedactingFilter", "protocol", "raise_fd_limit", "redact_logs"]

log = logging.getLogger("galapagos.service")


class _DeadlineProtocol(H11Protocol):
    read_timeout_s: float = 10.0
    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._reading():
            if self._deadline is None:
                self._arm()
        else:
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _reading(self) -> bool:
        """Whether a request's head (IDLE: some bytes came, not all) or body is awaited."""
        return self.conn.their_state in (h11.IDLE, h11.SEND_BODY)

    def _arm(self) -> None:
        self._deadline = self.loop.call_later(self.read_timeout_s, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        if self._reading() and not self.transport.is_closing():
            client = f"{self.client[0]}:{self.client[1]}" if self.client else "?"
            log.info("closed %s: no complete request within %gs", client, self.read_timeout_s)
            self.transport.close()


def protocol(read_timeout_s: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol closing connections that take longer than ``read_timeout_s`` to
    deliver a request (head and body)."""
    return type("DeadlineH11Protocol", (_DeadlineProtocol,), {"read_timeout_s": read_timeout_s})


def raise_fd_limit(wanted: int) -> int:
    """Raise this process's open-file limit towards ``wanted`` (at most the hard limit);
    returns the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    return int(soft)


class RedactingFilter(logging.Filter):
    """Every URL in a log record (message and traceback) with its credentials redacted."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if "://" in message:
            record.msg, record.args = redact_text(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text and "://" in record.exc_text:
            record.exc_text = redact_text(record.exc_text)
        return True


def redact_logs(*names: str) -> None:
    """Add :class:`RedactingFilter` to the handlers of the named loggers (uvicorn's own)."""
    flt = RedactingFilter()
    for name in names:
        for handler in logging.getLogger(name).handlers:
            handler.addFilter(flt)
