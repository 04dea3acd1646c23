"""An export is a bundle that reruns on its own: task files, composed scaffold, resolved config,
versions, a README with the command; ``galapagos run --from EXPORT`` from another directory,
into a fresh store, makes the same programs with the offline model."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.store.sqlite import SQLiteStore
from tests.cli.helpers import cli_env, galapagos


def _programs(store: Path, run_id: str) -> list[tuple[str, str, float]]:
    return [(p.id, p.code, p.score) for p in SQLiteStore(store).programs(run_id)]


def _export(tmp_path: Path, *run_args: str) -> tuple[Path, str, Path]:
    store = tmp_path / "original.sqlite"
    proc = galapagos("run", "-s", "topk", "--json", *run_args, store=store, timeout=600)
    assert proc.returncode == 0, proc.stderr
    run_id = json.loads(proc.stdout)["run_id"]
    bundle = tmp_path / "shared" / "bundle"
    proc = galapagos("export", run_id, "-o", str(bundle), store=store)
    assert proc.returncode == 0, proc.stderr
    assert f"rerun it with: galapagos run --from {bundle}" in proc.stderr
    return bundle, run_id, store


@pytest.mark.docker
@pytest.mark.slow
def test_an_export_reruns_from_another_directory_into_a_fresh_store(tmp_path: Path) -> None:
    bundle, run_id, original = _export(tmp_path, "-t", "circle_packing", "-i", "3")
    manifest = json.loads((bundle / "bundle.json").read_text())
    assert manifest["task"]["folder"] == "task/circle_packing"
    assert manifest["task"]["hash"] == SQLiteStore(original).get_run(run_id).task_hash
    assert manifest["exported_by"]["galapagos"] and manifest["seed"] == 0
    assert manifest["llm"]["provider"] == "offline"
    assert (bundle / "task" / "circle_packing" / "evaluator.py").is_file()
    assert yaml.safe_load((bundle / "scaffold.yaml").read_text())["blocks"]["population"]
    readme = (bundle / "README.md").read_text()
    assert "galapagos run --from ." in readme and manifest["task"]["hash"] in readme
    run_json = json.loads((bundle / "run.json").read_text())
    assert run_json["task_hash"] == manifest["task"]["hash"] and run_json["versions"]["python"]

    # Somewhere else entirely, a fresh store, the default sandbox (Docker).
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    fresh = elsewhere / "fresh.sqlite"
    proc = subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", "--from", "../shared/bundle", "--json"],
        cwd=elsewhere,
        env=cli_env(fresh),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    rerun = json.loads(proc.stdout)
    assert f"rerunning run {run_id} from the export ../shared/bundle" in proc.stderr
    assert _programs(fresh, rerun["run_id"]) == _programs(original, run_id)
    assert len(_programs(fresh, rerun["run_id"])) == 4


@pytest.mark.slow
def test_a_rerun_refuses_changed_task_files_and_flags_that_change_it(tmp_path: Path) -> None:
    bundle, _, _ = _export(tmp_path, "-t", "circle_packing", "-i", "1", "--sandbox", "local")
    other = tmp_path / "other.sqlite"
    proc = galapagos("run", "--from", str(bundle), "-i", "5", "--seed", "3", store=other)
    assert proc.returncode == 2
    assert "--iterations, --seed would change it" in proc.stderr
    evaluator = bundle / "task" / "circle_packing" / "evaluator.py"
    evaluator.write_text(evaluator.read_text() + "\n# edited\n")
    proc = galapagos("run", "--from", str(bundle), store=other)
    assert proc.returncode == 2 and "were changed; a rerun would not be the same run" in proc.stderr
    assert not other.exists()
    (bundle / "bundle.json").unlink()
    proc = galapagos("run", "--from", str(bundle), store=other)
    assert proc.returncode != 0  # no manifest: not an export (read as a run id, unknown)
