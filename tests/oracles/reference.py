"""Run reference code (SkyDiscover 0.1.0, OpenEvolve 0.4.0) in its own virtualenv.

The reference is trusted, published code; it never enters our process: each call starts the
oracle interpreter with a script that reads ``DATA`` (JSON on stdin) and prints one JSON line.
That interpreter can import the drivers in ``probes.py`` and the inputs in ``cases.py`` (this
folder is on its path, nothing else of ours).  It is ``.oracle-venv/bin/python`` (built by
``scripts/oracle-venv.sh``, which the test command runs), or ``$GALAPAGOS_ORACLE_PYTHON``.
Missing, it skips a test locally and fails it under ``CI=true``.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
ORACLE = Path(os.environ.get("GALAPAGOS_ORACLE_PYTHON") or ROOT / ".oracle-venv" / "bin" / "python")
GOLDEN = HERE / "golden"
REGENERATE = ".oracle-venv/bin/python tests/oracles/golden/record.py SKYDISCOVER_GIT_DIR"


class Reference:
    """The oracle: ``reference(code, payload)`` runs a script; ``reference.probe(name, *args)``
    runs ``probes.name(*args)`` and returns its (JSON) result."""

    def __call__(self, code: str, payload: Any) -> Any:
        return run_reference(code, payload)

    def probe(self, name: str, *args: Any) -> Any:
        return run_reference(f"import probes\nprint(json.dumps(probes.{name}(*DATA)))", list(args))


@functools.cache
def available(oracle: Path = ORACLE) -> bool:
    """Whether ``oracle`` is an interpreter that imports both references."""
    if not oracle.exists():
        return False
    probe = subprocess.run(
        [str(oracle), "-c", "import skydiscover, openevolve"],
        capture_output=True,
        check=False,
        timeout=120,
    )
    return probe.returncode == 0


def run_reference(code: str, payload: Any, *, timeout: float = 300) -> Any:
    """Run ``code`` in the oracle interpreter; it reads ``DATA`` and prints JSON (last line)."""
    script = f"import json, sys\nDATA = json.loads(sys.stdin.read())\n{code}"
    done = subprocess.run(
        [str(ORACLE), "-c", script],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
        env={**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": str(HERE)},
    )
    if done.returncode != 0:
        raise AssertionError(f"the reference failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def under_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def require_oracle(oracle: Path = ORACLE) -> Reference:
    """The oracle runner, or skip (fail under ``CI=true``) when it is not installed."""
    if not available(oracle):
        message = (
            f"no reference interpreter at {oracle}: run bash scripts/oracle-venv.sh "
            "(scripts/test.sh does)"
        )
        if under_ci():
            pytest.fail(message)
        pytest.skip(message)
    return Reference()


def golden(name: str) -> dict[str, Any]:
    """The golden trace ``golden/NAME.json``: ``{"commit", "recipe", "why", "trace"}``."""
    path = GOLDEN / f"{name}.json"
    if not path.exists():
        pytest.fail(f"no golden trace {path}: record it with {REGENERATE} {name}")
    data: dict[str, Any] = json.loads(path.read_text())
    return data
