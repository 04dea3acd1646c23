"""Run reference code (SkyDiscover 0.1.0, OpenEvolve 0.4.0) in its own virtualenv.

The reference is trusted, published code; it never enters our process: each call starts the
oracle interpreter with a script that reads ``DATA`` (JSON on stdin) and prints one JSON line.
The interpreter is ``.oracle-venv/bin/python`` (built by ``scripts/oracle-venv.sh``, which the
test command runs), or ``$GALAPAGOS_ORACLE_PYTHON``.  Missing, it skips a test locally and
fails it under ``CI=true``.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
ORACLE = Path(os.environ.get("GALAPAGOS_ORACLE_PYTHON") or ROOT / ".oracle-venv" / "bin" / "python")

Reference = Callable[[str, Any], Any]


def available() -> bool:
    if not ORACLE.exists():
        return False
    probe = subprocess.run(
        [str(ORACLE), "-c", "import skydiscover, openevolve"],
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
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    if done.returncode != 0:
        raise AssertionError(f"the reference failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def require_oracle() -> Reference:
    """The oracle runner, or skip (fail under ``CI=true``) when it is not installed."""
    if not available():
        message = (
            f"no reference interpreter at {ORACLE}: run bash scripts/oracle-venv.sh "
            "(scripts/test.sh does)"
        )
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    return run_reference
