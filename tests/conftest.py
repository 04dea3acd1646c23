"""Shared fixtures: no test sees real API keys; each test gets its own run store."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest_plugins = ["harness.sandbox.pytest_plugin"]


@pytest.fixture(autouse=True)
def _docker_tests_leave_no_containers(request: pytest.FixtureRequest) -> None:
    """Every test that uses Docker fails if it leaves one of this process's containers behind."""
    if request.node.get_closest_marker("docker") is not None:
        request.getfixturevalue("no_leaked_containers")


@pytest.fixture(autouse=True)
def _no_openai_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never talk to a real endpoint with real credentials."""
    for key in list(os.environ):
        if key.startswith("OPENAI_"):
            monkeypatch.delenv(key, raising=False)


@pytest.fixture
def store_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "store.sqlite"
    monkeypatch.setenv("GALAPAGOS_STORE", str(path))
    return path


@pytest.fixture
def reference():  # type: ignore[no-untyped-def]
    """Runs reference code in the oracle venv (skips locally without it; fails under CI=true)."""
    from tests.oracles.reference import require_oracle

    return require_oracle()
