"""The public Python API (``import galapagos``): a search in three lines, its result read from
the store, a stopped run resumed, config given as the YAML's keys, bad input refused before
anything runs.  Runs here use the offline model and the local sandbox (host subprocesses);
tests/api/test_docs_example.py runs the documented example in Docker."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import math
import os
import signal
from pathlib import Path

import pytest
import yaml

import galapagos
from harness.core.errors import ConfigError, TaskError
from harness.store import SQLiteStore

LOCAL = {"evaluator": {"sandbox": "local"}}


def test_a_search_in_three_lines_returns_its_best_program_history_and_store(
    tmp_path: Path,
) -> None:
    result = galapagos.run(
        "topk", "circle_packing", iterations=3, config=LOCAL, store=tmp_path / "s.sqlite"
    )
    assert (result.status, result.stop_reason, result.iterations_done) == (
        "completed",
        "completed",
        3,
    )
    store = result.store
    assert isinstance(store, SQLiteStore) and store.path == tmp_path / "s.sqlite"
    run = store.get_run(result.run_id)
    assert result.best is not None and result.best.id == run.best_program_id
    assert result.best == store.program(run.id, run.best_program_id)
    assert result.best_score == run.best_score == result.best.score
    assert result.seed_score == run.seed_score
    assert result.history == store.score_history(run.id)
    assert [i for i, _ in result.history] == [0, 1, 2, 3]
    assert result.programs() == store.programs(run.id)
    assert [e.kind for e in result.events("seed")] == ["seed"]
    assert result.record.max_iterations == 3 and result.record.scaffold == "topk"
    # The offline model is named as what it is, in the result and the log.
    assert any("NOT a language model" in note for note in result.notes)
    assert repr(result).startswith(f"<Result run {result.run_id}: completed (completed), 3 ")
    loaded = galapagos.Result.load(result.run_id[:17], store=store)  # a unique prefix
    assert dataclasses.replace(loaded, notes=result.notes) == result


def test_task_and_scaffold_objects_and_a_config_file(tmp_path: Path) -> None:
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump({**LOCAL, "general": {"max_iterations": 1}}))
    scaffold = galapagos.Scaffold("best_of_n")
    task = galapagos.Task("function_minimization")
    assert scaffold.name == "best_of_n" and set(scaffold.blocks) >= {"population", "proposer"}
    assert task.name == "function_minimization" and task.initial_program
    assert "best_of_n" in galapagos.Scaffold.names() and task.name in galapagos.Task.names()
    result = galapagos.run(scaffold, task, seed=5, config=config, store=tmp_path / "s.sqlite")
    record = result.record
    assert (record.scaffold, record.task, record.seed, record.max_iterations) == (
        "best_of_n",
        "function_minimization",
        5,
        1,
    )


def test_config_mappings_reach_the_run_as_the_yaml_would(tmp_path: Path) -> None:
    config = {
        **LOCAL,
        "general": {"max_iterations": 2, "inner_retry_times": 2},
        "llm": {"offline": {"seed": 11}},
    }
    result = galapagos.run("topk", "circle_packing", config=config, store=tmp_path / "s.sqlite")
    stored = result.record.config
    assert stored["general"]["max_iterations"] == 2 == result.iterations_done
    assert stored["general"]["inner_retry_times"] == 2
    assert stored["llm"]["offline"]["seed"] == 11
    assert stored["evaluator"]["sandbox"] == "local"


@pytest.mark.parametrize(
    "value",
    ["plain", "a: b # c", "", 3, 2.5, -math.inf, True, None, [1, "x"], [{"name": "m", "w": 1}]],
)
def test_a_config_mapping_is_the_user_config_layer_as_it_is(value: object) -> None:
    from galapagos._api import _config_layer

    path, data = _config_layer({"section": {"key": value}})
    assert path is None and data == {"section": {"key": value}}
    assert _config_layer({"s": {"k": (1, 2)}}) == (None, {"s": {"k": [1, 2]}})


def test_bad_input_is_refused_before_anything_runs(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    with pytest.raises(ConfigError, match="unknown scaffold 'nope'; valid scaffolds: .*topk"):
        galapagos.run("nope", "circle_packing", config=LOCAL, store=store)
    with pytest.raises(ConfigError, match="unknown scaffold"):
        galapagos.Scaffold("nope")
    with pytest.raises(TaskError):
        galapagos.Task(tmp_path)
    with pytest.raises(ConfigError, match="genral"):
        galapagos.run("topk", "circle_packing", config={"genral": {"x": 1}}, store=store)
    with pytest.raises(ConfigError, match="config file .* does not exist"):
        galapagos.run("topk", "circle_packing", config=tmp_path / "none.yaml", store=store)
    with pytest.raises(ConfigError, match="not a name"):
        galapagos.run("topk", "circle_packing", config={"a.b": 1}, store=store)
    assert not store.exists()  # nothing was created


def test_a_notebooks_running_event_loop_does_not_get_in_the_way(tmp_path: Path) -> None:
    async def cell() -> galapagos.Result:
        return galapagos.run(
            "topk", "circle_packing", iterations=1, config=LOCAL, store=tmp_path / "s.sqlite"
        )

    assert asyncio.run(cell()).status == "completed"


@pytest.mark.slow  # seven iterations in host subprocesses
def test_an_interrupt_stops_the_run_resumably_and_resume_finishes_it(tmp_path: Path) -> None:
    seen: list[int] = []

    def on_progress(progress: galapagos.Progress) -> None:
        seen.append(progress.iterations_done)
        if len(seen) == 1:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C (a notebook's stop button) mid-run

    stopped = galapagos.run(
        "topk",
        "circle_packing",
        iterations=6,
        config=LOCAL,
        store=tmp_path / "s.sqlite",
        on_progress=on_progress,
    )
    assert (stopped.status, stopped.stop_reason) == ("interrupted", "stopped")
    assert stopped.iterations_done < 6
    finished = galapagos.resume(stopped.run_id, store=stopped.store)
    assert (finished.run_id, finished.status, finished.iterations_done) == (
        stopped.run_id,
        "completed",
        6,
    )
    assert [i for i, _ in finished.history] == list(range(7))


async def test_arun_is_the_same_for_code_with_an_event_loop(tmp_path: Path) -> None:
    result = await galapagos.arun(
        "topk", "circle_packing", iterations=1, config=LOCAL, store=tmp_path / "s.sqlite"
    )
    more = await galapagos.aresume(result, iterations=2)
    assert (more.run_id, more.iterations_done) == (result.run_id, 2)


def test_every_public_name_is_documented() -> None:
    missing = []
    for name in galapagos.__all__:
        obj = getattr(galapagos, name)
        if name.startswith("__"):
            continue
        if not inspect.getdoc(obj):
            missing.append(name)
        if inspect.isclass(obj) and obj.__module__.startswith("galapagos"):
            for member, value in vars(obj).items():
                if not member.startswith("_") and not inspect.getdoc(value):
                    missing.append(f"{name}.{member}")
    assert missing == []
