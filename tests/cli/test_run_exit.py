"""``galapagos run`` ends its process at once after the summary (no interpreter finalisation),
having removed its containers and closed its store first (issue 27: start-up and exit cost)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.helpers import galapagos


@pytest.mark.docker
def test_a_run_exits_with_its_containers_removed_and_its_store_closed(tmp_path: Path) -> None:
    import docker

    store = tmp_path / "runs.sqlite"
    proc = galapagos(
        "run", "-s", "best_of_n", "-t", "function_minimization", "-i", "2", "--json",
        store=store, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads(proc.stdout)  # the whole summary was flushed before the exit
    assert summary["status"] == "completed" and summary["iterations_done"] == 2
    left = docker.from_env().containers.list(
        all=True, ignore_removed=True, filters={"label": f"galapagos.run={summary['run_id']}"}
    )
    assert left == []
    # Closed: SQLite folds its write-ahead log back into the file when the last connection closes.
    assert store.is_file() and not Path(f"{store}-wal").exists()


def test_a_failed_run_still_exits_with_its_code(tmp_path: Path) -> None:
    """Every iteration fails (a seed that never scores): exit 1 after the summary."""
    folder = tmp_path / "task"
    folder.mkdir()
    (folder / "initial_program.py").write_text("def f():\n    return 1\n")
    (folder / "evaluator.py").write_text(
        "def evaluate(program_path):\n    raise RuntimeError('never scores')\n"
    )
    proc = galapagos(
        "run", "-s", "topk", "-t", str(folder), "-i", "2", "--sandbox", "local", "--json",
        store=tmp_path / "runs.sqlite",
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert json.loads(proc.stdout)["run_id"]
