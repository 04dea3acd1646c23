"""`galapagos tasks`: the catalog names the stored run behind each best score, and reads a store
only where one exists."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.helpers import galapagos


@pytest.fixture(scope="module")
def stored_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A store holding one short offline run on function_minimization (trusted seed: local)."""
    store = tmp_path_factory.mktemp("catalog") / "store.sqlite"
    proc = galapagos(
        "run", "--scaffold", "topk", "--task", "function_minimization", "--iterations", "1",
        "--sandbox", "local", "--store", str(store), "--json",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return store, json.loads(proc.stdout)["run_id"]


@pytest.mark.slow
def test_tasks_json_names_the_best_stored_run(stored_run: tuple[Path, str]) -> None:
    store, run_id = stored_run
    proc = galapagos("tasks", "--store", str(store), "--json")
    assert proc.returncode == 0, proc.stderr
    rows = {row["name"]: row for row in json.loads(proc.stdout)}
    assert rows["function_minimization"]["best_stored_run"] == run_id
    assert rows["function_minimization"]["best_stored_score"] is not None
    assert rows["circle_packing"]["best_stored_run"] is None


@pytest.mark.slow
def test_tasks_table_shows_the_best_run_id(stored_run: tuple[Path, str]) -> None:
    store, run_id = stored_run
    proc = galapagos("tasks", "--store", str(store))
    assert proc.returncode == 0, proc.stderr
    assert "best run" in proc.stdout.splitlines()[0]
    line = next(ln for ln in proc.stdout.splitlines() if ln.split()[0] == "function_minimization")
    assert run_id in line


def test_tasks_with_a_store_not_yet_created_lists_the_catalog_and_creates_nothing(
    tmp_path: Path,
) -> None:
    missing = tmp_path / "nodir" / "x.sqlite"
    proc = galapagos("tasks", "--store", str(missing))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"note: no run store at {missing} yet (galapagos run creates it)"
    ]
    assert "circle_packing" in proc.stdout
    assert not (tmp_path / "nodir").exists()


def test_tasks_without_any_store_lists_the_catalog(tmp_path: Path) -> None:
    proc = galapagos("tasks", "--json", env={"XDG_DATA_HOME": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    assert {row["best_stored_run"] for row in json.loads(proc.stdout)} == {None}
    assert list(tmp_path.iterdir()) == []
