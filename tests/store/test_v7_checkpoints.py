"""A run whose checkpoint deltas were written as nested nodes (schema v7) opens, reads the same
checkpoint, and goes on writing flat deltas (schema v8).

``data/checkpoint_v7_87c8bf7.sqlite.gz`` was written by 87c8bf7 (schema v7) with its own CLI,
offline model and local sandbox:

    galapagos run --scaffold openevolve --task circle_packing --iterations 5 --seed 3 \
        --sandbox local --store S

(a base and five deltas), then checkpointed into one file (``journal_mode=DELETE``, ``VACUUM``)
and gzipped; ``data/checkpoint_v7_87c8bf7.json.gz`` is the checkpoint that release read back
from it (``SQLiteReader.checkpoint``), keys in order.
"""

from __future__ import annotations

import gzip
import json
import sqlite3
from pathlib import Path

import pytest

from harness.runs import execute, plan_resume
from harness.store import SCHEMA_VERSION, SQLiteReader, SQLiteStore
from tests.store.test_schema import unpacked_store, version_of

DATA = Path(__file__).parent / "data"
FIXTURE = DATA / "checkpoint_v7_87c8bf7.sqlite.gz"
READ_BACK = DATA / "checkpoint_v7_87c8bf7.json.gz"


@pytest.fixture
def v7_store(tmp_path: Path) -> Path:
    return unpacked_store(FIXTURE, tmp_path, 7)


def _deltas(path: Path) -> list[object]:
    with sqlite3.connect(path) as conn:
        return [json.loads(t) for (t,) in conn.execute("SELECT delta FROM checkpoint_deltas")]


async def test_a_v7_chain_of_nested_deltas_reads_back_and_the_run_goes_on(v7_store: Path) -> None:
    expected = json.loads(gzip.decompress(READ_BACK.read_bytes()))
    nested = _deltas(v7_store)
    assert len(nested) == 5 and all(isinstance(d, dict) and d["~"] == "d" for d in nested)
    store = SQLiteStore(v7_store)
    assert version_of(v7_store) == SCHEMA_VERSION == 8
    found = store.checkpoint(expected["run_id"])
    assert found is not None
    assert found[0] == expected["iteration"] == 5
    assert json.dumps(found[1]) == json.dumps(expected["state"])  # values and key order
    plan = plan_resume(store, expected["run_id"], iterations=8)
    summary = await execute(plan, store)
    assert (summary.status, summary.iterations_done) == ("completed", 8)
    flat = _deltas(v7_store)  # this writer's chain: a new base, then flat deltas
    assert flat and all(isinstance(d, list) and all(isinstance(op, list) for op in d) for d in flat)
    store.close()
    reader = SQLiteReader(v7_store)
    again = reader.checkpoint(expected["run_id"])
    assert again is not None and again[0] == 8
    assert [p.iteration for p in reader.programs(expected["run_id"])] == list(range(9))
    reader.close()
