"""Every chaos test leaves a running engine behind, whatever happened in it (belt and braces:
each test also restores the engine itself)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.chaos.engine import engine_running, engine_up


@pytest.fixture(autouse=True)
def engine_back_afterwards() -> Iterator[None]:
    yield
    if not engine_running():
        engine_up()
