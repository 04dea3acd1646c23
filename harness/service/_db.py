"""The hub's own tables in the run store file: API tokens (hashed) and the run queue.

They live beside the run store's tables (one file to back up) under their own version key, so
the store's migrations and the hub's never collide.  Connections are short-lived and per
call: the CLI (``galapagos token``) and a running hub may use the file at the same time.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.core.errors import ConfigError, StoreError

__all__ = ["QueueItem", "ServiceDB", "TokenInfo"]

_SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS service_tokens (
        id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, digest TEXT NOT NULL,
        created_at REAL NOT NULL, last_used_at REAL, revoked_at REAL
    );
    CREATE TABLE IF NOT EXISTS service_queue (
        run_id TEXT PRIMARY KEY, state TEXT NOT NULL, options TEXT NOT NULL,
        enqueued_at REAL NOT NULL, started_at REAL, finished_at REAL, error TEXT DEFAULT ''
    );
    """,
)
#: A token is ``gal_<id>_<secret>``: the id finds the row, the secret's SHA-256 is compared.
#: The secret is 32 random bytes, so a fast hash is enough (nothing to brute-force).
_PREFIX = "gal_"
#: Seconds between updates of a token's ``last_used_at`` (each is a write to the store).
_TOUCH_S = 60.0


@dataclass(frozen=True)
class TokenInfo:
    id: str
    name: str
    created_at: float
    last_used_at: float | None
    revoked_at: float | None

    @property
    def active(self) -> bool:
        return self.revoked_at is None


@dataclass(frozen=True)
class QueueItem:
    run_id: str
    #: ``queued`` (waiting), ``running`` (a worker has it), ``done``.
    state: str
    #: Resume options (``iterations``, ``max_total_tokens``, ``max_cost``).
    options: Mapping[str, Any]
    enqueued_at: float


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class ServiceDB:
    """Tokens and queue rows in ``path`` (the run store file)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        with self._conn() as conn:
            for statement in _SCHEMA[0].split(";"):
                if statement.strip():
                    conn.execute(statement)

    @contextmanager
    def _conn(self, write: bool = True) -> Iterator[sqlite3.Connection]:
        """A short transaction: ``write=False`` takes no write lock (WAL readers never wait
        for, nor hold up, the run writer)."""
        try:
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open run store {self.path}: {exc}") from exc
        try:
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            yield conn
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise StoreError(f"run store {self.path}: {exc}") from exc
        finally:
            conn.close()

    # -- tokens -----------------------------------------------------------------------------
    def create_token(self, name: str) -> str:
        """A new token named ``name``; the clear text is returned once and never stored."""
        name = name.strip()
        if not name or len(name) > 64 or not name.replace("-", "").replace("_", "").isalnum():
            raise ConfigError(
                f"token name {name!r}: use 1-64 letters, digits, '-' or '_' (e.g. laptop)"
            )
        token_id = secrets.token_hex(4)
        secret = secrets.token_urlsafe(32)
        with self._conn() as conn:
            taken = conn.execute("SELECT 1 FROM service_tokens WHERE name = ?", (name,)).fetchone()
            if taken:
                raise ConfigError(
                    f"a token named {name!r} already exists; revoke it first "
                    f"(galapagos token revoke {name}) or choose another name"
                )
            conn.execute(
                "INSERT INTO service_tokens VALUES (?, ?, ?, ?, NULL, NULL)",
                (token_id, name, _digest(secret), time.time()),
            )
        return f"{_PREFIX}{token_id}_{secret}"

    def tokens(self) -> list[TokenInfo]:
        with self._conn(write=False) as conn:
            rows = conn.execute(
                "SELECT id, name, created_at, last_used_at, revoked_at FROM service_tokens "
                "ORDER BY created_at"
            ).fetchall()
        return [TokenInfo(*row) for row in rows]

    def active_tokens(self) -> int:
        return sum(1 for t in self.tokens() if t.active)

    def revoke_token(self, name_or_id: str) -> TokenInfo:
        with self._conn() as conn:
            row = conn.execute(
                "SELECT id FROM service_tokens WHERE (name = ? OR id = ?) AND revoked_at IS NULL",
                (name_or_id, name_or_id),
            ).fetchone()
            if row is None:
                raise ConfigError(f"no active token {name_or_id!r}; see galapagos token list")
            conn.execute(
                "UPDATE service_tokens SET revoked_at = ? WHERE id = ?", (time.time(), row[0])
            )
        return next(t for t in self.tokens() if t.id == row[0])

    def check_token(self, token: str) -> TokenInfo | None:
        """The active token ``token`` is, else ``None`` (constant-time secret comparison)."""
        if not token.startswith(_PREFIX) or len(token) > 200:
            return None
        token_id, sep, secret = token[len(_PREFIX) :].partition("_")
        if not sep:
            return None
        with self._conn(write=False) as conn:
            row = conn.execute(
                "SELECT id, name, created_at, last_used_at, revoked_at, digest "
                "FROM service_tokens WHERE id = ?",
                (token_id,),
            ).fetchone()
        if row is None or not secrets.compare_digest(row[5], _digest(secret)):
            return None
        info = TokenInfo(*row[:5])
        if not info.active:
            return None
        now = time.time()
        if info.last_used_at is None or now - info.last_used_at > _TOUCH_S:
            with self._conn() as conn:  # a write at most once a minute per token
                conn.execute(
                    "UPDATE service_tokens SET last_used_at = ? WHERE id = ?", (now, token_id)
                )
        return info

    # -- queue ------------------------------------------------------------------------------
    def enqueue(self, run_id: str, options: Mapping[str, Any]) -> None:
        with self._conn() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO service_queue VALUES (?, 'queued', ?, ?, NULL, NULL, '')",
                (run_id, json.dumps(dict(options)), time.time()),
            )

    def set_state(self, run_id: str, state: str, error: str = "") -> None:
        now = time.time()
        column = "started_at" if state == "running" else "finished_at"
        with self._conn() as conn:
            conn.execute(
                f"UPDATE service_queue SET state = ?, error = ?, {column} = ? WHERE run_id = ?",
                (state, error, now, run_id),
            )

    def pending(self) -> list[QueueItem]:
        """Rows a starting hub must (re)run: those running when it stopped first, then the
        queued ones, each in the order they were enqueued."""
        with self._conn(write=False) as conn:
            rows = conn.execute(
                "SELECT run_id, state, options, enqueued_at FROM service_queue "
                "WHERE state IN ('running', 'queued') "
                "ORDER BY state = 'queued', enqueued_at"
            ).fetchall()
        return [QueueItem(r[0], r[1], json.loads(r[2]), r[3]) for r in rows]

    def item(self, run_id: str) -> QueueItem | None:
        with self._conn(write=False) as conn:
            row = conn.execute(
                "SELECT run_id, state, options, enqueued_at FROM service_queue WHERE run_id = ?",
                (run_id,),
            ).fetchone()
        return QueueItem(row[0], row[1], json.loads(row[2]), row[3]) if row else None
