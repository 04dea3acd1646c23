"""The run store: one SQLite file per installation, read and written through narrow protocols.

- :class:`SQLiteStore` opens a file for writing (created and migrated as needed); it is the
  controller's :class:`~harness.core.store.RunStore`, a :class:`StoreReader`, and holds
  ``.leases`` (:class:`RunLeases`) and ``.benchmarks`` (:class:`BenchmarkStore`).
- :class:`SQLiteReader` opens a file read-only (:class:`StoreReader`).
- :mod:`harness.store.schema` is the file's one migration list (runs, benchmarks, the hub's
  tables); :mod:`harness.store.owner` says whether a run's owner is alive.

Callers depend on the protocols (:mod:`harness.store.protocols`), not on the classes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.core.store import RunStore
from harness.store.protocols import (
    BenchmarkCell,
    BenchmarkReader,
    BenchmarkStore,
    LeasedRunStore,
    RunLeases,
    RunReader,
    StoredEvent,
    StoreReader,
)
from harness.store.reader import SQLiteReader
from harness.store.schema import SCHEMA_VERSION
from harness.store.sqlite import SQLiteStore, default_store_path

__all__ = [
    "SCHEMA_VERSION",
    "BenchmarkCell",
    "BenchmarkReader",
    "BenchmarkStore",
    "LeasedRunStore",
    "RunLeases",
    "RunReader",
    "RunStore",
    "SQLiteReader",
    "SQLiteStore",
    "StoreReader",
    "StoredEvent",
    "default_store_path",
]

if TYPE_CHECKING:  # mypy checks that each class implements the protocols it stands for
    from harness.store.benchmarks import SQLiteBenchmarks
    from harness.store.leases import SQLiteLeases

    def _implements(
        store: SQLiteStore, reader: SQLiteReader, bench: SQLiteBenchmarks, leases: SQLiteLeases
    ) -> tuple[LeasedRunStore, StoreReader, StoreReader, BenchmarkStore, RunLeases]:
        return store, store, reader, bench, leases
