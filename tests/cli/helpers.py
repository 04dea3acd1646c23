"""Running the real ``galapagos`` command in a subprocess, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def cli_env(store: Path | None = None, env: dict[str, str] | None = None) -> dict[str, str]:
    """The caller's environment without its API keys or Galapagos settings; ``store`` becomes
    ``GALAPAGOS_STORE``, then ``env`` is added."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "GALAPAGOS_"))}
    if store is not None:
        full_env["GALAPAGOS_STORE"] = str(store)
    full_env.update(env or {})
    return full_env


def galapagos(
    *args: str,
    store: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess:
    """``python -m harness.cli ARGS`` from the repo root, in :func:`cli_env`."""
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args],
        cwd=ROOT,
        env=cli_env(store, env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
