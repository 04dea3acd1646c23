"""A node that runs another sandbox image than this host's recipes make is refused."""

from __future__ import annotations

from typing import Any

import pytest

from harness.core.errors import SandboxError
from harness.distributed.backend import RayBackend
from harness.distributed.cluster import Node
from harness.sandbox.images import image_tag
from harness.sandbox.protocol import Job

pytestmark = pytest.mark.ray


class _Ready:
    def __init__(self, tag: str) -> None:
        self.tag = tag

    async def remote(self, options: Any, image: str) -> dict[str, Any]:
        return {"image": self.tag}


class _Agent:
    def __init__(self, tag: str) -> None:
        self.ready = _Ready(tag)


class _Cluster:
    ray: Any = None


@pytest.mark.parametrize("same", [True, False])
async def test_a_node_must_report_the_image_tag_of_this_hosts_recipes(same: bool) -> None:
    job = Job(mode="sealed", function="evaluate", candidate="", files={})
    expected = image_tag(job.image)
    tag = expected if same else "galapagos/python-eval:0000000000000000"
    node = Node("n" * 16, "10.0.0.2", 2, _Agent(tag))
    backend = RayBackend(_Cluster(), {})  # type: ignore[arg-type]
    if same:
        await backend._prepare(node, job)
        assert node.info["image"] == expected
    else:
        with pytest.raises(SandboxError, match="install the same Galapagos version"):
            await backend._prepare(node, job)
