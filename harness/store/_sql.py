"""One SQLite connection to a store file: its lock, its transactions, JSON in columns, and the
listeners told of each committed write.  Shared by the pieces of a store (runs, leases,
benchmarks) so that they write in the same transactions."""

from __future__ import annotations

import json
import json.encoder
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

from harness.core.errors import StoreError
from harness.store import schema

__all__ = ["CommitListener", "Connection", "dumps"]

#: Called after a write is committed: ``(run_id, what)`` with ``what`` one of ``"run"`` (created
#: or updated) and ``"iteration"`` (an iteration committed).  Runs in the writer's thread.
CommitListener = Callable[[str, str], None]


def dumps(value: Any) -> str:
    """``json.dumps(value, separators=(",", ":"), default=...)``, through one encoder made once
    (``json.dumps`` with any option builds a new one per call, and ``JSONEncoder.encode`` builds
    its C encoder per call: called straight, ~0.6 us less per value)."""
    if _C_ENCODE is None or isinstance(value, str):
        return _ENCODER.encode(value)
    return "".join(_C_ENCODE(value, 0))


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    raise TypeError(f"not JSON-serialisable: {type(value).__name__}")


#: No check for circular containers (a set of ids per container: ~15% of the time): the values
#: are JSON data; one that contains itself still fails, with a ``RecursionError``.
_ENCODER = json.JSONEncoder(separators=(",", ":"), default=_json_default, check_circular=False)
#: The C encoder ``_ENCODER.encode`` makes per call (without its circular-container markers),
#: made once; ``None`` where Python has no C encoder.
_MAKE_C_ENCODER = getattr(json.encoder, "c_make_encoder", None)
_C_ENCODE = (
    _MAKE_C_ENCODER(
        None,  # no markers: check_circular=False
        _json_default,
        json.encoder.encode_basestring_ascii,  # ensure_ascii
        None,  # indent
        ":",
        ",",
        False,  # sort_keys
        False,  # skipkeys
        True,  # allow_nan
    )
    if _MAKE_C_ENCODER is not None
    else None
)


class Connection:
    """Thread-safe (one connection, one lock); readers in other processes see WAL snapshots.

    ``read_only``: ``mode=ro``, no migration, the schema version must be current; otherwise
    the file (and its folder) is created if missing and migrated to the current schema."""

    def __init__(self, path: str | os.PathLike[str], *, read_only: bool) -> None:
        self.path = Path(path)
        self.read_only = read_only
        self.listeners: list[CommitListener] = []
        try:
            if read_only:
                uri = f"file:{quote(str(self.path.resolve()))}?mode=ro"
                self.conn = sqlite3.connect(
                    uri, uri=True, check_same_thread=False, isolation_level=None, timeout=30
                )
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self.conn = sqlite3.connect(
                    self.path, check_same_thread=False, isolation_level=None, timeout=30
                )
            self.conn.row_factory = sqlite3.Row
            if not read_only:
                self.conn.execute("PRAGMA journal_mode=WAL")
                self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.execute("PRAGMA foreign_keys=ON")
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open run store {self.path}: {exc}") from exc
        self.lock = threading.RLock()
        try:
            if read_only:
                with self.lock:
                    schema.check_version(self.conn, self.path)
            else:
                with self.tx() as conn:
                    schema.migrate(conn, self.path)
        except sqlite3.Error as exc:
            self.conn.close()
            raise StoreError(f"run store {self.path}: {exc}") from exc
        except StoreError:
            self.conn.close()
            raise

    @contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (``BEGIN IMMEDIATE``), rolled back on any exception."""
        with self.lock:
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                yield self.conn
                self.conn.execute("COMMIT")
            except BaseException:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise

    def query(self, sql: str, args: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self.lock:
            try:
                return self.conn.execute(sql, args).fetchall()
            except sqlite3.Error as exc:
                raise StoreError(f"run store {self.path}: {exc}") from exc

    def notify(self, run_id: str, what: str) -> None:
        for listener in self.listeners:
            listener(run_id, what)

    def close(self) -> None:
        with self.lock:
            self.conn.close()
