"""Bad input to ``galapagos bench`` is one line, before anything starts; nothing stored changes."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.benchmark import BenchmarkSpec, plan_benchmark
from harness.benchmark.matrix import empty_cells
from harness.cli import app
from harness.store.sqlite import SQLiteStore

runner = CliRunner()

BASE = ["bench", "--name", "b1", "--seeds", "2", "--iterations", "1"]


def _bench(store: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, [*BASE, "--store", str(store), *args])
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--scaffolds", "topk,nope", "--tasks", "circle_packing"],
         "unknown scaffold(s) nope (valid: "),
        (["--scaffolds", "topk", "--tasks", "circle_packing,no_such_task"],
         "unknown task(s) no_such_task (valid: "),
        (["--scaffolds", "topk,nope", "--tasks", "zzz"], "unknown scaffold(s) nope"),
        (["--scaffolds", "topk", "--tasks", "circle_packing", "--set", "general"],
         "--set"),
        (["--scaffolds", "topk", "--tasks", "circle_packing", "--set", "general.nope=1"],
         "nope"),
        (["--scaffolds", "topk,,best_of_n", "--tasks", "circle_packing"], "empty items"),
        (["--scaffolds", "topk,topk", "--tasks", "circle_packing"], "more than once"),
        (["--scaffolds", "topk", "--tasks", "all,circle_packing"], "cannot be combined"),
        (["--scaffolds", "topk", "--tasks", "circle_packing", "--max-cost", "0"], "--max-cost"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_and_creates_no_store(
    tmp_path: Path, args: list[str], message: str
) -> None:
    store = tmp_path / "s.sqlite"
    code, output = _bench(store, *args)
    assert code == 2, output
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), output
    assert message in " ".join(output.split())
    assert not store.exists()


def test_a_name_clash_with_another_matrix_leaves_the_stored_benchmark_alone(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.sqlite"
    store = SQLiteStore(path)
    spec = BenchmarkSpec("b1", ("topk",), ("circle_packing",), seeds=2, iterations=1)
    plan = plan_benchmark(spec, store)
    store.benchmarks.create_benchmark("b1", plan.matrix, empty_cells(plan))
    before = (store.benchmarks.benchmark("b1"), store.benchmarks.benchmark_cells("b1"))

    code, output = _bench(path, "--scaffolds", "topk", "--tasks", "circle_packing",
                          "--iterations", "2")  # fmt: skip
    assert code == 2
    assert "benchmark 'b1' already exists" in output and "iterations differ" in output
    assert (store.benchmarks.benchmark("b1"), store.benchmarks.benchmark_cells("b1")) == before
    assert store.list_runs() == []

    # The same matrix is no clash: it plans as a continuation.
    again = plan_benchmark(spec, store)
    assert again.exists and [c.seed for c in again.cells] == [0, 1]


def test_a_scaffold_named_twice_through_a_file_is_refused(tmp_path: Path) -> None:
    from harness.core.registry import get_spec

    composition = tmp_path / "topk.yaml"
    composition.write_text(get_spec("topk").path.read_text())
    code, output = _bench(tmp_path / "s.sqlite", "--scaffolds", f"topk,{composition}",
                          "--tasks", "circle_packing")  # fmt: skip
    assert code == 2, output
    assert "both scaffold 'topk'" in output


def test_a_benchmark_run_by_another_live_process_is_refused(tmp_path: Path) -> None:
    import asyncio

    from harness.benchmark import prepare_cells, run_benchmark
    from harness.core.errors import ConfigError
    from harness.runtime import Runtime
    from harness.store.owner import owner_token

    store = SQLiteStore(tmp_path / "s.sqlite")
    plan = plan_benchmark(
        BenchmarkSpec("b1", ("topk",), ("circle_packing",), seeds=1, iterations=1), store
    )
    store.benchmarks.create_benchmark("b1", plan.matrix, empty_cells(plan))
    other = owner_token(1)  # a live process that is not this one
    assert store.benchmarks.claim_benchmark("b1", other) == ""
    again = plan_benchmark(
        BenchmarkSpec("b1", ("topk",), ("circle_packing",), seeds=1, iterations=1), store
    )
    states = prepare_cells(again, store)
    with pytest.raises(ConfigError, match="being run by another process"):
        asyncio.run(run_benchmark(again, store, states, parallel=1, runtime=Runtime()))
    assert store.list_runs() == [] and store.benchmarks.benchmark_cells("b1")[0].run_id is None
    # Released, or held by a process that is gone, it can be claimed.
    store.benchmarks.release_benchmark("b1", other)
    assert store.benchmarks.claim_benchmark("b1", "no-boot:999999:1") == ""
    assert store.benchmarks.claim_benchmark("b1", owner_token()) == ""


def test_a_composition_file_is_a_scaffold_of_the_matrix(tmp_path: Path) -> None:
    from harness.core.registry import get_spec

    composition = tmp_path / "mine.yaml"
    composition.write_text(get_spec("topk").path.read_text())
    spec = BenchmarkSpec("b1", ("best_of_n", str(composition)), ("circle_packing",), 1, 1)
    plan = plan_benchmark(spec, None)
    names = [c.scaffold for c in plan.cells]
    assert names[0] == "best_of_n" and names[1] != "best_of_n"
    assert plan.matrix["scaffolds"] == names
    assert list(plan.matrix["compositions"]) == [names[1]]
    # The file is part of the matrix: another composition under the same path is a new matrix.
    composition.write_text(composition.read_text() + "\n# changed\n")
    assert plan_benchmark(spec, None).matrix != plan.matrix
