"""Owner labels: only containers of dead processes are ever reaped."""

from __future__ import annotations

import os
import subprocess
import sys

from harness.sandbox.ownership import owner_alive, owner_id


def test_this_process_is_alive() -> None:
    assert owner_alive(owner_id())


def test_a_dead_process_is_dead() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    owner = owner_id(child.pid)
    child.wait()
    assert not owner_alive(owner)


def test_a_reused_pid_with_another_start_time_is_dead() -> None:
    boot, ns, pid, start = owner_id().split("/")
    assert not owner_alive(f"{boot}/{ns}/{pid}/{int(start) + 1}")


def test_unknown_formats_and_other_namespaces_are_left_alone() -> None:
    boot, _ns, pid, start = owner_id().split("/")
    assert owner_alive("not-our-format")
    assert owner_alive(f"{boot}/123/{os.getpid() + 10**6}/{start}")


def test_other_boots_are_dead_only_if_older_than_this_boot() -> None:
    assert not owner_alive("other-boot/1/2/3", created=0.0)
    assert owner_alive("other-boot/1/2/3", created=None)


def test_a_removal_already_in_progress_counts_as_removed() -> None:
    """The engine answers a second remover with 409 "already in progress": done, not a failure."""
    import docker.errors
    import requests

    from harness.sandbox.ownership import _removal_in_progress

    def error(status: int, text: str) -> docker.errors.APIError:
        response = requests.Response()
        response.status_code = status
        return docker.errors.APIError(text, response=response, explanation=text)

    assert _removal_in_progress(error(409, "removal of container abc is already in progress"))
    assert not _removal_in_progress(error(409, "conflict: container is paused"))
    assert not _removal_in_progress(error(500, "removal of container abc is already in progress"))
