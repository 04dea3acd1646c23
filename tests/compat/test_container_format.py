"""SkyDiscover's containerised evaluator format (``evaluator/`` with ``Dockerfile`` and
``evaluate.sh``) loads as a task: the Dockerfile is translated under Galapagos' image rules
(``harness.sandbox.folder_images``), what cannot be translated is a one-line error with the line,
and in Docker the folder's own ``evaluate.sh`` scores candidates in the image built from it, its
JSON read by SkyDiscover's rules."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest

from harness.core.errors import TaskError
from harness.evaluation.task import load_task
from harness.sandbox.folder_images import translate
from tests.cli.helpers import galapagos

PEERS = Path(__file__).resolve().parents[1] / "data" / "peers" / "skydiscover"
TRIANGLE = PEERS / "benchmarks" / "math" / "heilbronn_triangle"


def test_skydiscovers_dockerfile_translates_to_a_layer_over_python_eval() -> None:
    image = translate(TRIANGLE / "evaluator")
    assert image.python == "3.12" and image.workdir == "/benchmark"
    assert image.requirements == ("numpy", "scipy")  # pip install -r requirements.txt
    copied = {target for _, target in image.copies}
    assert {"/benchmark/evaluate.sh", "/benchmark/evaluator.py", "/benchmark/wrapper.py"} <= copied
    assert ("/benchmark", "chmod +x evaluate.sh") in image.commands
    assert any(line.startswith("ENTRYPOINT") for line in image.unused)
    task = load_task(TRIANGLE)
    assert task.card.mode == "compat" and task.card.cascade == ()
    assert task.card.image == f"python-eval@{(TRIANGLE / 'evaluator').resolve()}"
    assert task.card.limits.wall_s == 360  # the folder's evaluator.timeout
    assert "evaluator/evaluator.py" in task.files  # in the task's digest


@pytest.mark.parametrize(
    ("dockerfile", "line", "expected"),
    [
        ("FROM ubuntu:24.04\n", 1, "only python:* bases"),
        ("FROM python:3.12-slim\nRUN apt-get update && apt-get install -y gcc\n", 2,
         "RUN apt-get update"),
        ("FROM python:3.12\nADD https://example.com/data.tgz /data\n", 2, "downloads"),
        ("FROM python:3.12\nCOPY ../secret /x\n", 2, "outside the evaluator's folder"),
        ("FROM python:3.12 AS build\nFROM python:3.12\n", 2, "multi-stage"),
    ],
)  # fmt: skip
def test_what_the_rules_cannot_build_is_refused_with_its_line(
    tmp_path: Path, dockerfile: str, line: int, expected: str
) -> None:
    folder = tmp_path / "task"
    shutil.copytree(TRIANGLE, folder)
    (folder / "evaluator" / "Dockerfile").write_text(dockerfile)
    with pytest.raises(TaskError) as refused:
        load_task(folder)
    message = str(refused.value)
    assert f"Dockerfile at line {line}: " in message and expected in message
    assert "\n" not in message


@pytest.mark.docker
@pytest.mark.slow
def test_the_folders_own_evaluate_sh_scores_candidates_in_its_image(tmp_path: Path) -> None:
    folder = tmp_path / "heilbronn_triangle"
    shutil.copytree(TRIANGLE, folder)
    # A seed worth something (SkyDiscover's puts all 11 points at the origin: score 0).
    seed = folder / "initial_program.py"
    seed.write_text(
        seed.read_text().replace(
            "points = np.zeros((n, 2))",
            "rng = np.random.default_rng(1)\n"
            "    points = [p for p in rng.random((200, 2)) * [1, 0.8] "
            "if p[1] <= 1.7 * min(p[0], 1 - p[0])][:n]\n"
            "    points = np.array(points)",
        )
    )
    store = tmp_path / "s.sqlite"
    done = galapagos(
        "run", "--task", str(folder), "--offline", "-i", "1", "--store", str(store), "--json",
        timeout=900,
    )  # fmt: skip
    # Exit 1 says every iteration failed; the offline model's one edit may break the program.
    assert done.returncode in (0, 1), done.stderr
    summary = json.loads(done.stdout)
    assert summary["status"] == "completed" and summary["iterations_done"] == 1
    assert summary["scaffold"] == "topk"  # SkyDiscover's default search
    assert summary["seed_score"] > 0
    from harness.store.sqlite import SQLiteStore

    opened = SQLiteStore(store)
    try:
        seed_eval = opened.evaluations(summary["run_id"])[0]["result"]
    finally:
        opened.close()
    # The folder's evaluator's own metrics, read from evaluate.sh's JSON.
    assert set(seed_eval["metrics"]) >= {"combined_score", "min_area_normalized", "eval_time"}


@pytest.mark.docker
@pytest.mark.slow
def test_a_broken_evaluator_script_is_a_failed_evaluation_with_its_output(tmp_path: Path) -> None:
    folder = tmp_path / "broken"
    shutil.copytree(TRIANGLE, folder)
    (folder / "evaluator" / "evaluate.sh").write_text(
        textwrap.dedent(
            """\
            #!/usr/bin/env bash
            echo "not json"
            """
        )
    )
    done = galapagos(
        "run", "--task", str(folder), "--offline", "-i", "0", "--json",
        "--store", str(tmp_path / "s.sqlite"), timeout=900,
    )  # fmt: skip
    summary = json.loads(done.stdout)
    assert summary["seed_score"] == 0.0  # SkyDiscover: {"error": 0.0}, the output kept


def test_a_folder_images_tag_follows_its_files(tmp_path: Path) -> None:
    from harness.sandbox.images import image_tag

    folder = tmp_path / "task"
    shutil.copytree(TRIANGLE, folder)
    name = f"python-eval@{(folder / 'evaluator').resolve()}"
    before = image_tag(name)
    assert before.startswith("galapagos/python-eval-folder-")
    assert image_tag(name) == before  # content-addressed: stable
    evaluator = folder / "evaluator" / "evaluator.py"
    evaluator.write_text(evaluator.read_text() + "\n# changed\n")
    assert image_tag(name) != before


def test_toolchain_images_are_built_on_demand_only() -> None:
    import docker.errors

    from harness.core.errors import SandboxUnavailable
    from harness.sandbox.images import build_images, load_recipes

    class NoImages:
        class images:  # noqa: N801 - the docker client's attribute
            @staticmethod
            def get(tag: str) -> None:
                raise docker.errors.ImageNotFound(tag)

    recipes = load_recipes()
    assert recipes["r-eval"].on_demand and recipes["rust-eval"].on_demand
    assert not recipes["python-eval"].on_demand
    with pytest.raises(SandboxUnavailable, match="galapagos sandbox build rust-eval"):
        build_images(["rust-eval"], client=NoImages(), on_demand=False)  # type: ignore[arg-type]
