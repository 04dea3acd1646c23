"""Running the real ``galapagos`` command in a subprocess, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def galapagos(
    *args: str,
    store: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess:
    """``python -m harness.cli ARGS`` from the repo root, without the caller's API keys or
    Galapagos settings; ``store`` becomes ``GALAPAGOS_STORE``."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "GALAPAGOS_"))}
    if store is not None:
        full_env["GALAPAGOS_STORE"] = str(store)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args],
        cwd=ROOT,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
