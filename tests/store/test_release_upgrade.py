"""A store written by the previous release opens, is upgraded, and keeps everything.

``data/release_1a44a00.sqlite.gz`` was written by release 1a44a00 (store schema v3, the hub's
tables versioned apart) with its own CLI, offline model and local sandbox:

    galapagos run -s topk -t circle_packing -i 2 --seed 7 --sandbox local --store S
    galapagos bench --name fixture --scaffolds topk --tasks circle_packing --seeds 1 -i 1 \
        -p 1 --set evaluator.sandbox=local --store S
    galapagos token create fixture-laptop --store S
    (and, through that release's ServiceDB, the first run queued with {"iterations": 4}, done)

then checkpointed into one file (``journal_mode=DELETE``, ``VACUUM``) and gzipped.  The token's
clear text below was printed by that command; it opens nothing but this fixture.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.runs import execute, plan_resume, run_status
from harness.service._db import ServiceDB
from harness.store import SCHEMA_VERSION, SQLiteReader, SQLiteStore
from tests.store.test_schema import schema_of, unpacked_store, version_of

FIXTURE = Path(__file__).parent / "data" / "release_1a44a00.sqlite.gz"
RUN = "20261126-232626-f4cfc4"  # galapagos run … -i 2
CELL_RUN = "20261126-232636-d0b112"  # the benchmark's one cell
TOKEN = "gal_d5fbd0db_RhwfUXUjW1YjyG3zVP-V7DokOmBh9eAhjneMyS8icbg"


@pytest.fixture
def old_store(tmp_path: Path) -> Path:
    return unpacked_store(FIXTURE, tmp_path, 3)


def test_the_previous_releases_store_is_upgraded_in_place(old_store: Path, tmp_path: Path) -> None:
    store = SQLiteStore(old_store)
    assert version_of(old_store) == SCHEMA_VERSION
    SQLiteStore(tmp_path / "fresh.sqlite").close()
    assert schema_of(old_store) == schema_of(tmp_path / "fresh.sqlite")
    runs = {r.id: r for r in store.list_runs()}
    assert set(runs) == {RUN, CELL_RUN}
    run = runs[RUN]
    assert (run.scaffold, run.task, run.seed, run.max_iterations) == (
        "topk",
        "circle_packing",
        7,
        2,
    )
    assert (run.status, run.iterations_done, run_status(run)) == ("completed", 2, "completed")
    # Columns the old release did not have read as their defaults.
    assert (run.stop_reason, run.heartbeat_at) == ("", None)
    assert run.best_score == pytest.approx(0.8710057912479507)
    assert [i for i, _ in store.score_history(RUN)] == [0, 1, 2]
    assert store.programs(RUN)[0].iteration == 0 and store.checkpoint(RUN) is not None
    assert [e.kind for e in store.events(RUN, ["seed", "admit"])] == [
        "seed",
        "admit",
        "admit",
        "admit",
    ]
    assert store.llm_usage(RUN)["calls"] == 2
    assert store.benchmarks.benchmark("fixture") is not None
    (cell,) = store.benchmarks.benchmark_cells("fixture")
    assert (cell.scaffold, cell.task, cell.seed, cell.run_id) == (
        "topk",
        "circle_packing",
        0,
        CELL_RUN,
    )
    store.close()
    reader = SQLiteReader(old_store)  # upgraded: a read-only connection now opens it
    assert reader.get_run(RUN).iterations_done == 2
    reader.close()


def test_the_previous_releases_hub_tables_keep_working(old_store: Path) -> None:
    db = ServiceDB(old_store)
    token = db.check_token(TOKEN)
    assert token is not None
    # Tokens made before scopes existed could do everything: they are admin tokens.
    assert (token.name, token.scope, token.expires_at) == ("fixture-laptop", "admin", None)
    assert db.check_token(TOKEN[:-1] + "x") is None
    item = db.item(RUN)
    assert item is not None
    assert (item.state, dict(item.options), item.token_id) == ("done", {"iterations": 4}, "")
    db.revoke_token("fixture-laptop")
    assert db.check_token(TOKEN) is None
    db.close()


async def test_a_run_of_the_previous_release_is_extended_by_this_one(old_store: Path) -> None:
    store = SQLiteStore(old_store)
    plan = plan_resume(store, RUN, iterations=4)
    summary = await execute(plan, store)
    assert (summary.status, summary.iterations_done) == ("completed", 4)
    assert [i for i, _ in store.score_history(RUN)] == [0, 1, 2, 3, 4]
    assert store.get_run(RUN).stop_reason == "completed"
    assert [e.kind for e in store.events(RUN, ["run_extended"])] == ["run_extended"]
