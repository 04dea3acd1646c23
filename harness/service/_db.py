"""The hub's own tables in the run store file: API tokens and login sessions (hashed) and the
run queue.

They live beside the run store's tables (one file to back up) and are created and upgraded by
the store's one migration list (:mod:`harness.store.schema`, v5 and v6).  Transactions are
short: the CLI (``galapagos token``) and a running hub may use the file at the same time.
"""

from __future__ import annotations

import hashlib
import json
import queue
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.core.errors import ConfigError, StoreError
from harness.store import schema

__all__ = ["SCOPES", "QueueItem", "ServiceDB", "Session", "TokenInfo"]

#: What a token may do, each level including the ones before it: ``read`` (the pages and read
#: API of a private hub), ``launch`` (launch runs; cancel and resume its own), ``admin`` (cancel
#: and resume any run, the CLI's too).
SCOPES = ("read", "launch", "admin")

#: A token is ``gal_<id>_<secret>``: the id finds the row, the secret's SHA-256 is compared.
#: The secret is 32 random bytes, so a fast hash is enough (nothing to brute-force).
_PREFIX = "gal_"
#: Seconds between updates of a token's ``last_used_at`` or a session's ``last_seen_at`` (each
#: is a write to the store).
_TOUCH_S = 60.0


@dataclass(frozen=True)
class TokenInfo:
    id: str
    name: str
    created_at: float
    last_used_at: float | None
    revoked_at: float | None
    scope: str = "admin"
    expires_at: float | None = None

    @property
    def active(self) -> bool:
        return self.revoked_at is None and not self.expired

    @property
    def expired(self) -> bool:
        return self.expires_at is not None and time.time() >= self.expires_at

    def allows(self, scope: str) -> bool:
        """Whether this token's scope includes ``scope``."""
        return SCOPES.index(self.scope) >= SCOPES.index(scope)


@dataclass(frozen=True)
class Session:
    """A browser's login: the cookie holds a random id; the store keeps its hash."""

    token: TokenInfo
    expires_at: float


@dataclass(frozen=True)
class QueueItem:
    run_id: str
    #: ``queued`` (waiting), ``running`` (a worker has it), ``done``.
    state: str
    #: Resume options (``iterations``, ``max_total_tokens``, ``max_cost``).
    options: Mapping[str, Any]
    enqueued_at: float
    #: The token that queued it ('' for runs queued before tokens were recorded).
    token_id: str = ""


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


_TOKEN_COLUMNS = "id, name, created_at, last_used_at, revoked_at, scope, expires_at"


class ServiceDB:
    """Tokens, sessions and queue rows in ``path`` (the run store file), on up to
    ``connections`` kept connections (a server's threads share them)."""

    def __init__(self, path: Path, *, connections: int = 1) -> None:
        self.path = path
        self._size = max(1, connections)
        self._idle: queue.Queue[sqlite3.Connection] = queue.Queue()
        self._made = 0
        self._lock = threading.Lock()
        with self._conn() as conn:
            schema.migrate(conn, path)  # the store's one migration list holds these tables

    @contextmanager
    def _conn(self, write: bool = True) -> Iterator[sqlite3.Connection]:
        """A short transaction on one of a few kept connections: ``write=False`` takes no
        write lock (WAL readers never wait for, nor hold up, the run writer).

        Connections are kept, not opened per call: SQLite cannot close the file of a
        connection while another connection of the process holds a lock on it, so opening and
        closing one per call under load piles up open files."""
        conn = self._acquire()
        kept: sqlite3.Connection | None = conn
        try:
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            conn.close()
            kept = None
            raise StoreError(f"run store {self.path}: {exc}") from exc
        finally:
            self._release(kept)

    def _acquire(self) -> sqlite3.Connection:
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            pass
        with self._lock:
            if self._made < self._size:
                self._made += 1
                try:
                    return sqlite3.connect(
                        self.path, timeout=30, isolation_level=None, check_same_thread=False
                    )
                except sqlite3.Error as exc:
                    self._made -= 1
                    raise StoreError(f"cannot open run store {self.path}: {exc}") from exc
        try:
            return self._idle.get(timeout=60)
        except queue.Empty as exc:
            raise StoreError(f"run store {self.path}: no connection free for 60 s") from exc

    def _release(self, conn: sqlite3.Connection | None) -> None:
        if conn is None:
            with self._lock:
                self._made -= 1
            return
        self._idle.put(conn)

    def warm(self) -> None:
        """Open every connection now, each with its write-ahead log (SQLite opens a
        connection's ``-wal`` file at its first read, not at connect): a server's open files
        then stay what they are, however many connections a later burst happens to use."""
        with self._lock:  # the idle ones, then new ones until the pool is full
            wanted = self._idle.qsize() + self._size - self._made
        taken = [self._acquire() for _ in range(wanted)]
        try:
            for conn in taken:
                conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"run store {self.path}: {exc}") from exc
        finally:
            for conn in taken:
                self._release(conn)

    def close(self) -> None:
        """Close the kept connections (a later call opens new ones)."""
        while True:
            try:
                conn = self._idle.get_nowait()
            except queue.Empty:
                return
            conn.close()
            with self._lock:
                self._made -= 1

    # -- tokens -----------------------------------------------------------------------------
    def create_token(
        self, name: str, *, scope: str = "launch", expires_in_s: float | None = None
    ) -> str:
        """A new token named ``name``; the clear text is returned once and never stored."""
        name = name.strip()
        if not name or len(name) > 64 or not name.replace("-", "").replace("_", "").isalnum():
            raise ConfigError(
                f"token name {name!r}: use 1-64 letters, digits, '-' or '_' (e.g. laptop)"
            )
        if scope not in SCOPES:
            raise ConfigError(f"token scope {scope!r}: give one of {', '.join(SCOPES)}")
        if expires_in_s is not None and not expires_in_s > 0:
            raise ConfigError(f"token expiry {expires_in_s}: give a duration above 0")
        token_id = secrets.token_hex(4)
        secret = secrets.token_urlsafe(32)
        now = time.time()
        expires = now + expires_in_s if expires_in_s is not None else None
        with self._conn() as conn:
            taken = conn.execute("SELECT 1 FROM service_tokens WHERE name = ?", (name,)).fetchone()
            if taken:
                raise ConfigError(
                    f"a token named {name!r} already exists; revoke it first "
                    f"(galapagos token revoke {name}) or choose another name"
                )
            conn.execute(
                "INSERT INTO service_tokens (id, name, digest, created_at, scope, expires_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (token_id, name, _digest(secret), now, scope, expires),
            )
        return f"{_PREFIX}{token_id}_{secret}"

    def tokens(self) -> list[TokenInfo]:
        with self._conn(write=False) as conn:
            rows = conn.execute(
                f"SELECT {_TOKEN_COLUMNS} FROM service_tokens ORDER BY created_at"
            ).fetchall()
        return [TokenInfo(*row) for row in rows]

    def active_tokens(self) -> int:
        return sum(1 for t in self.tokens() if t.active)

    def revoke_token(self, name_or_id: str) -> TokenInfo:
        """Revoke a token and end every login session made with it."""
        now = time.time()
        with self._conn() as conn:
            row = conn.execute(
                "SELECT id FROM service_tokens WHERE (name = ? OR id = ?) AND revoked_at IS NULL",
                (name_or_id, name_or_id),
            ).fetchone()
            if row is None:
                raise ConfigError(f"no active token {name_or_id!r}; see galapagos token list")
            conn.execute("UPDATE service_tokens SET revoked_at = ? WHERE id = ?", (now, row[0]))
            conn.execute(
                "UPDATE service_sessions SET revoked_at = ? "
                "WHERE token_id = ? AND revoked_at IS NULL",
                (now, row[0]),
            )
        return next(t for t in self.tokens() if t.id == row[0])

    def check_token(self, token: str) -> TokenInfo | None:
        """The active token ``token`` is, else ``None`` (constant-time secret comparison)."""
        if not token.startswith(_PREFIX) or len(token) > 200 or not token.isascii():
            return None
        token_id, sep, secret = token[len(_PREFIX) :].partition("_")
        if not sep:
            return None
        with self._conn(write=False) as conn:
            row = conn.execute(
                f"SELECT {_TOKEN_COLUMNS}, digest FROM service_tokens WHERE id = ?", (token_id,)
            ).fetchone()
        if row is None or not secrets.compare_digest(row[-1], _digest(secret)):
            return None
        info = TokenInfo(*row[:-1])
        if not info.active:
            return None
        now = time.time()
        if info.last_used_at is None or now - info.last_used_at > _TOUCH_S:
            with self._conn() as conn:  # a write at most once a minute per token
                conn.execute(
                    "UPDATE service_tokens SET last_used_at = ? WHERE id = ?", (now, token_id)
                )
        return info

    def token(self, token_id: str) -> TokenInfo | None:
        with self._conn(write=False) as conn:
            row = conn.execute(
                f"SELECT {_TOKEN_COLUMNS} FROM service_tokens WHERE id = ?", (token_id,)
            ).fetchone()
        return TokenInfo(*row) if row else None

    # -- sessions ---------------------------------------------------------------------------
    def create_session(self, token: TokenInfo, *, ttl_s: float) -> tuple[str, float]:
        """A login session for ``token``: its id (for the cookie; only its hash is kept) and
        when it ends (never after the token expires)."""
        session_id = secrets.token_urlsafe(32)
        now = time.time()
        ends = now + ttl_s
        if token.expires_at is not None:
            ends = min(ends, token.expires_at)
        with self._conn() as conn:
            conn.execute(
                "DELETE FROM service_sessions WHERE expires_at < ? OR revoked_at IS NOT NULL",
                (now - 86400,),
            )
            conn.execute(
                "INSERT INTO service_sessions VALUES (?, ?, ?, ?, ?, NULL)",
                (_digest(session_id), token.id, now, now, ends),
            )
        return session_id, ends

    def check_session(self, session_id: str, *, idle_s: float) -> Session | None:
        """The live session ``session_id`` names: not revoked, not expired, used within
        ``idle_s``, its token still active; else ``None``."""
        if not session_id or len(session_id) > 100 or not session_id.isascii():
            return None
        digest = _digest(session_id)
        with self._conn(write=False) as conn:
            row = conn.execute(
                "SELECT token_id, last_seen_at, expires_at, revoked_at FROM service_sessions "
                "WHERE digest = ?",
                (digest,),
            ).fetchone()
        if row is None:
            return None
        token_id, last_seen, expires, revoked = row
        now = time.time()
        if revoked is not None or now >= expires or now - last_seen > idle_s:
            return None
        token = self.token(token_id)
        if token is None or not token.active:
            return None
        if now - last_seen > min(_TOUCH_S, idle_s / 4):
            with self._conn() as conn:
                conn.execute(
                    "UPDATE service_sessions SET last_seen_at = ? WHERE digest = ?", (now, digest)
                )
        return Session(token, expires)

    def end_session(self, session_id: str) -> None:
        """Log out: the session stops working at once, wherever its cookie is."""
        with self._conn() as conn:
            conn.execute(
                "UPDATE service_sessions SET revoked_at = ? WHERE digest = ?",
                (time.time(), _digest(session_id)),
            )

    # -- queue ------------------------------------------------------------------------------
    def enqueue(self, run_id: str, options: Mapping[str, Any], token_id: str = "") -> None:
        with self._conn() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO service_queue "
                "(run_id, state, options, enqueued_at, started_at, finished_at, error, token_id) "
                "VALUES (?, 'queued', ?, ?, NULL, NULL, '', ?)",
                (run_id, json.dumps(dict(options)), time.time(), token_id),
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
                "SELECT run_id, state, options, enqueued_at, token_id FROM service_queue "
                "WHERE state IN ('running', 'queued') "
                "ORDER BY state = 'queued', enqueued_at"
            ).fetchall()
        return [QueueItem(r[0], r[1], json.loads(r[2]), r[3], r[4] or "") for r in rows]

    def item(self, run_id: str) -> QueueItem | None:
        with self._conn(write=False) as conn:
            row = conn.execute(
                "SELECT run_id, state, options, enqueued_at, token_id FROM service_queue "
                "WHERE run_id = ?",
                (run_id,),
            ).fetchone()
        return QueueItem(row[0], row[1], json.loads(row[2]), row[3], row[4] or "") if row else None

    def in_queue(self, token_id: str) -> int:
        """Runs ``token_id`` has queued or running now."""
        with self._conn(write=False) as conn:
            row = conn.execute(
                "SELECT COUNT(*) FROM service_queue "
                "WHERE token_id = ? AND state IN ('queued', 'running')",
                (token_id,),
            ).fetchone()
        return int(row[0])

    def queued_count(self) -> int:
        with self._conn(write=False) as conn:
            row = conn.execute(
                "SELECT COUNT(*) FROM service_queue WHERE state = 'queued'"
            ).fetchone()
        return int(row[0])
