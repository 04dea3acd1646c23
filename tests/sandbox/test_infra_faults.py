"""Infrastructure faults met by one job, against the real engine: a container removed from
outside at each step of its life is retried on a fresh one and never becomes the candidate's
result."""

from __future__ import annotations

from typing import Any

import pytest

from harness.sandbox.hardening import ContainerSpec, create_hardened_container
from tests.sandbox.helpers import program, sealed_job

pytestmark = pytest.mark.docker


async def test_a_container_removed_between_create_and_start_is_retried(
    docker_backend: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``sandbox gc --run`` (or an operator) removes the container the backend just created:
    the start finds it gone, and the job runs again on a fresh container."""
    from harness.sandbox import docker_backend as module

    removed: list[str] = []

    def create_then_remove(client: Any, spec: ContainerSpec) -> Any:
        container = create_hardened_container(client, spec)
        if not removed:
            container.remove(force=True)
            removed.append(container.name)
        return container

    monkeypatch.setattr(module, "create_hardened_container", create_then_remove)
    result = await docker_backend.run(sealed_job(program("return 2.5")))
    assert removed
    assert result.status == "ok" and result.metrics["combined_score"] == 2.5
    assert len(result.infra_retries) == 1 and "removed from outside" in result.infra_retries[0]
