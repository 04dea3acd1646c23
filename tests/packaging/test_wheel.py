"""A wheel that deploys: ``pip install`` of the built wheel (not editable) into a fresh venv,
used from outside the checkout, has the tasks, the image recipes and the in-container runtime;
it builds (or finds) the images, passes the doctor and runs a search in Docker, from the CLI and
from the Python API."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _run(cmd: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "GALAPAGOS_"))}
    env.pop("PYTHONPATH", None)
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def test_the_built_wheel_installs_and_runs_outside_the_checkout(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    built = _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist),
                  str(ROOT)], cwd=tmp_path)  # fmt: skip
    assert built.returncode == 0, built.stderr
    (wheel,) = dist.glob("galapagos-*.whl")
    venv = tmp_path / "venv"
    assert _run([sys.executable, "-m", "venv", str(venv)], cwd=tmp_path).returncode == 0
    installed = _run([str(venv / "bin/pip"), "install", "-q", str(wheel)], cwd=tmp_path)
    assert installed.returncode == 0, installed.stderr[-3000:]
    galapagos = str(venv / "bin/galapagos")
    work = tmp_path / "elsewhere"  # not the checkout: nothing may come from it
    work.mkdir()
    version = _run([galapagos, "--version"], cwd=work)
    assert version.returncode == 0 and version.stdout.startswith("galapagos 0.1.0")
    where = _run([str(venv / "bin/python"), "-c",
                  "import harness, harness.sandbox._runtime as r; print(harness.__file__); "
                  "print(r.IMAGES_DIR)"], cwd=work)  # fmt: skip
    module, images = where.stdout.split()
    assert str(venv) in module and str(venv) in images and str(ROOT) not in images
    tasks = json.loads(_run([galapagos, "tasks", "--json"], cwd=work).stdout)
    assert {"circle_packing", "function_minimization"} <= {t["name"] for t in tasks}
    build = _run([galapagos, "sandbox", "build"], cwd=work)
    assert build.returncode == 0, build.stderr[-3000:]
    doctor = _run([galapagos, "sandbox", "doctor"], cwd=work)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    store = work / "s.sqlite"
    run = _run([galapagos, "run", "-s", "topk", "-t", "circle_packing", "-i", "2", "--json",
                "--store", str(store)], cwd=work)  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    summary = json.loads(run.stdout)
    assert summary["status"] == "completed" and summary["iterations_done"] == 2
    assert summary["seed_error"] is None
    # The Python API ships in the wheel as the package ``galapagos``.
    api = _run([str(venv / "bin/python"), "-c",
                "import galapagos; r = galapagos.run('topk', 'circle_packing', iterations=1, "
                f"store={str(store)!r}); print(galapagos.__file__, r.status, r.iterations_done)"],
               cwd=work)  # fmt: skip
    assert api.returncode == 0, api.stderr[-3000:]
    module, status, done = api.stdout.split()
    assert str(venv) in module and (status, done) == ("completed", "1")
