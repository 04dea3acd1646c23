"""SkyDiscover's containerised evaluator format as a compat task: a folder whose ``evaluator/``
holds a ``Dockerfile`` and ``evaluate.sh`` (SkyDiscover's math benchmarks).

SkyDiscover builds that image, keeps one container and runs ``evaluate.sh <program> <mode>`` in
it for every candidate, reading one JSON object from its stdout (``status``,
``combined_score``, ``metrics``, ``artifacts``; ``wrapper.py`` makes that of an
``evaluate(program_path)`` function).  Here the image is built from the folder's Dockerfile
under Galapagos' image rules (:mod:`harness.sandbox.folder_images`: the base mapped to the local
``python-eval``, packages from the host, no network), and every candidate gets a fresh,
hardened container like any compat job, in which :data:`BRIDGE` (the job's evaluator) runs
``evaluate.sh`` and reads its answer by SkyDiscover's rules.  ``evaluate.sh`` runs as the
candidate's unprivileged user: the folder's ``evaluator.py`` imports the candidate in its own
process, so the candidate can tamper with that evaluation (docs/sandbox.md).
"""

from __future__ import annotations

from pathlib import Path

from harness.core.errors import TaskError
from harness.sandbox.folder_images import FOLDER_MARK, FolderImage, translate

__all__ = ["BRIDGE_MODULE", "ContainerFolder", "bridge_source", "container_folder"]

#: The job's evaluator module (shipped as ``<name>.py``).
BRIDGE_MODULE = "galapagos_skydiscover_container"
#: Where SkyDiscover runs the script (``ContainerizedEvaluator``: ``/benchmark/evaluate.sh``).
SCRIPT = "evaluate.sh"
#: The job's evaluator: SkyDiscover keeps a failing script's whole stderr; here the sandbox's
#: output limit caps it.
_BRIDGE = '''"""Galapagos' bridge to a SkyDiscover containerised evaluator: runs its
evaluate.sh on the program and reads the one JSON object it prints, by SkyDiscover's rules
(ContainerizedEvaluator._run_single_in_container and _parse_output)."""

import json
import subprocess

SCRIPT = {script!r}
WORKDIR = {workdir!r}


class Result:
    def __init__(self, metrics, artifacts):
        self.metrics = metrics
        self.artifacts = artifacts


def evaluate(program_path, mode="train"):
    done = subprocess.run(
        [SCRIPT, program_path, mode], cwd=WORKDIR, capture_output=True, text=True
    )
    if done.returncode != 0:
        failed = {{"stderr": done.stderr, "exit_code": str(done.returncode)}}
        return Result({{"error": 0.0}}, failed)
    try:
        data = json.loads(done.stdout.strip())
    except ValueError:
        return Result({{"error": 0.0}}, {{"raw_output": done.stdout}})
    if not isinstance(data, dict):
        return Result({{"error": 0.0}}, {{"raw_output": done.stdout}})
    status = data.get("status", "error")
    metrics = {{
        str(k): float(v)
        for k, v in (data.get("metrics") or {{}}).items()
        if isinstance(v, (int, float))
    }}
    metrics.setdefault("combined_score", float(data.get("combined_score", 0.0)))
    artifacts = {{str(k): str(v) for k, v in (data.get("artifacts") or {{}}).items()}}
    if status != "success":
        artifacts.setdefault("status", str(status))
    if done.stderr.strip():
        artifacts.setdefault("stderr", done.stderr)
    return Result(metrics, artifacts)
'''


class ContainerFolder:
    """A containerised evaluator folder (``evaluator/`` with ``Dockerfile`` + ``evaluate.sh``)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.evaluator_dir = folder / "evaluator"
        self.image: FolderImage = translate(self.evaluator_dir)
        script = f"{self.image.workdir.rstrip('/')}/{SCRIPT}"
        if not any(target == script for _, target in self.image.copies):
            raise TaskError(
                f"{self.evaluator_dir / 'Dockerfile'}: it does not put evaluate.sh in its "
                f"WORKDIR ({self.image.workdir}), where SkyDiscover runs it; COPY it there"
            )
        self.script = script

    def image_name(self, base: str) -> str:
        """The image of this folder over ``base`` (``python-eval`` or a derived name)."""
        return f"{base}{FOLDER_MARK}{self.evaluator_dir.resolve()}"

    def bridge(self) -> bytes:
        return bridge_source(self.script, self.image.workdir).encode()

    def files(self) -> dict[str, bytes]:
        """The evaluator's files, for the task's digest (the image carries them)."""
        return {
            f"evaluator/{p.relative_to(self.evaluator_dir).as_posix()}": p.read_bytes()
            for p in sorted(self.evaluator_dir.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts
        }

    def context(self) -> str:
        """What SkyDiscover's ``inject_evaluator_context`` shows of a container benchmark:
        each text file but the Dockerfile, requirements and data (.json), 10 at most."""
        parts: list[str] = []
        for path in sorted(self.evaluator_dir.iterdir()):
            if len(parts) >= 10:
                break
            if not path.is_file() or path.name in ("Dockerfile", "requirements.txt"):
                continue
            if path.suffix == ".json" or path.stat().st_size > 50_000:
                continue
            try:
                parts.append(f"# {path.name}\n{path.read_text()}")
            except UnicodeDecodeError:
                continue
        return "\n\n".join(parts)


def bridge_source(script: str, workdir: str) -> str:
    return _BRIDGE.format(script=script, workdir=workdir)


def container_folder(folder: Path) -> ContainerFolder | None:
    """The folder's containerised evaluator, if it has one (``evaluator/`` with a Dockerfile
    and ``evaluate.sh``)."""
    directory = folder / "evaluator"
    if (directory / "Dockerfile").is_file() and (directory / SCRIPT).is_file():
        return ContainerFolder(folder)
    return None
