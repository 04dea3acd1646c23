"""Whole-run differential comparisons: a reference implementation and Galapagos on the same task
folder and config, each against its own fresh :class:`~tests.oracles.fake_endpoint.FakeEndpoint`
(so both receive the same answers to the same questions), compared request by request: the
parent each request shows as the current program, and the other programs it shows.

The cases (:data:`CASES`) are the configs written into the folder's ``config.yaml`` (the
endpoint's URL filled in), in the reference's own format: Galapagos reads the same file.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.cli.helpers import cli_env
from tests.oracles.cases_runs import CASES, FIXTURE, ITERATIONS, Case
from tests.oracles.fake_endpoint import FakeEndpoint, Request

ROOT = Path(__file__).resolve().parents[2]


def task_folder(tmp: Path, case: Case, url: str, iterations: int = ITERATIONS) -> Path:
    path = tmp / case.name
    shutil.copytree(FIXTURE, path)
    (path / "config.yaml").write_text(case.config(url, iterations))
    return path


def run_ours(
    folder: Path, case: Case, *, reference_mode: bool = True, iterations: int = ITERATIONS
) -> dict[str, Any]:
    """``galapagos run`` on ``folder`` (its config names the endpoint and the model), with the
    local sandbox (the fixture and the endpoint's programs are trusted test data)."""
    settings = [*case.settings, *(["loop.reference_mode=true"] if reference_mode else [])]
    store = folder.parent / f"{case.name}-{reference_mode}.sqlite"
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", "--task", str(folder),
         "--scaffold", case.scaffold, "--sandbox", "local", "-i", str(iterations),
         "--store", str(store), "--json", "--quiet",
         *(item for s in settings for item in ("--set", s))],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
        env=cli_env(env={"OPENAI_API_KEY": "not-needed"}),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    summary: dict[str, Any] = json.loads(done.stdout)
    summary["store"] = store
    return summary


def trace(log: list[Request]) -> list[list[Any]]:
    """What is compared of each request: the current program and the programs shown (by
    hash), and what the endpoint answered (by kind)."""
    return [[r.current, r.shown, r.kind] for r in log]


def mismatch(theirs: list[list[Any]], ours: list[list[Any]]) -> str:
    """ "" when the traces agree at every request, else where and how they part."""
    for n, (a, b) in enumerate(zip(theirs, ours, strict=False)):
        if a[:2] != b[:2]:
            what = "parent" if a[0] != b[0] else "shown programs"
            return f"request {n}: the {what} differ (reference {a}, ours {b})"
    if len(theirs) != len(ours):
        return f"{len(theirs)} requests in the reference, {len(ours)} here"
    return ""


__all__ = [
    "CASES",
    "FIXTURE",
    "ITERATIONS",
    "Case",
    "FakeEndpoint",
    "mismatch",
    "run_ours",
    "task_folder",
    "trace",
]
