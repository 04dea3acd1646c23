"""Infrastructure faults met by one job, against the real engine: a container removed from
outside at each step of its life is retried on a fresh one and never becomes the candidate's
result."""

from __future__ import annotations

import contextlib
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


async def test_an_image_gone_from_the_engine_is_looked_up_again_and_the_job_retried(
    sandbox_images: dict[str, str],
) -> None:
    """The tag a backend resolved is removed from the engine (``docker rmi``, an engine that
    lost its images): the job is retried after resolving the image again, not failed."""
    import docker

    from harness.sandbox.docker_backend import DockerBackend

    client = docker.from_env()
    real = sandbox_images["python-eval"]
    copy = "galapagos-test/python-eval:vanishing"
    client.images.get(real).tag(copy)
    backend = DockerBackend(pool_size=0)
    try:
        backend._tags["python-eval"] = copy  # as if resolved to this tag before it vanished
        client.images.remove(copy)  # only the extra tag: the image stays for everyone else
        result = await backend.run(sealed_job(program("return 1.5")))
    finally:
        backend.close()
        with contextlib.suppress(docker.errors.ImageNotFound):
            client.images.remove(copy)
    assert result.status == "ok" and result.metrics["combined_score"] == 1.5
    assert len(result.infra_retries) == 1 and "not built" in result.infra_retries[0]
    assert backend._tags["python-eval"] == real
