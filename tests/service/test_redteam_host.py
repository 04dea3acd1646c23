"""Red team, against a real ``galapagos serve`` (Docker only, as a hub starts by default): a
token holder cannot make the hub's host run anything or read outside its task roots — not by a
config override, not by resuming a stored run whose config says otherwise.

Each test names the finding it covers (hub trial of 2026-11-26).  A marker file is the proof:
the hostile template or candidate writes it when, and only when, it runs on this host."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from harness.service._db import ServiceDB
from harness.store.sqlite import SQLiteStore
from tests.service.conftest import ServerProcess, marker_task, stored_run

#: A template that runs a shell command in the process rendering it (the classic escape).
ESCAPES = (
    "{{ cycler.__init__.__globals__.os.system('touch %(m)s') }}",
    "{{ ''.__class__.__mro__[1].__subclasses__() }}{{ joiner.__init__.__globals__"
    ".os.popen('touch %(m)s').read() }}",
)


@pytest.fixture
def hub(tmp_path: Path) -> tuple[ServerProcess, dict[str, str], Path]:
    """A hub on a fresh store: Docker only, one task root, a launch token."""
    store = tmp_path / "hub.sqlite"
    SQLiteStore(store).close()
    token = ServiceDB(store).create_token("attacker")
    root = tmp_path / "roots"
    root.mkdir()
    return (
        ServerProcess(store, root, local_sandbox=False),
        {"Authorization": f"Bearer {token}"},
        root,
    )


def _template_folder(base: Path, marker: Path) -> Path:
    folder = base / "host-templates"
    folder.mkdir()
    for name, escape in zip(("user.j2", "system.j2", "scratch.j2"), ESCAPES * 2, strict=False):
        (folder / name).write_text(escape % {"m": marker})
    return folder


@pytest.mark.docker
@pytest.mark.slow
def test_a_template_folder_from_a_client_is_refused_and_never_rendered(
    hub: tuple[ServerProcess, dict[str, str], Path], tmp_path: Path
) -> None:
    """Finding: a run launched with ``prompt.template_dir`` at a host folder rendered its
    templates in the hub's process, unsandboxed (``os.system`` ran as the hub's user)."""
    server, auth, _ = hub
    marker = tmp_path / "template-ran"
    folder = _template_folder(tmp_path, marker)
    server.start()
    try:
        with httpx.Client(base_url=server.url, headers=auth, timeout=30) as c:
            for override in (
                f"prompt.template_dir={folder}",
                f"prompt={{template_dir: {folder}}}",  # the same key, as a YAML mapping
            ):
                r = c.post(
                    "/api/v1/runs",
                    json={
                        "task": "function_minimization",
                        "scaffold": "topk",
                        "iterations": 2,
                        "overrides": [override],
                    },
                )
                assert r.status_code == 400, r.text
                assert "prompt.template_dir" in r.json()["detail"]
                assert r.headers["content-type"] == "application/problem+json"
            assert c.get("/api/v1/runs").json() == []
    finally:
        server.stop()
    assert not marker.exists()


@pytest.mark.docker
@pytest.mark.slow
def test_resuming_a_stored_local_sandbox_run_is_refused(
    hub: tuple[ServerProcess, dict[str, str], Path], tmp_path: Path
) -> None:
    """Finding: resuming (API) a stored run whose config says ``evaluator.sandbox: local`` ran
    its candidates as host subprocesses on a hub without ``--allow-local-sandbox``."""
    server, auth, root = hub
    marker = tmp_path / "candidate-ran-on-host"
    task = marker_task(root, "probe_min", marker)
    admin = ServiceDB(server.store).create_token("owner", scope="admin")
    resumed = stored_run(server.store, task, sandbox="local")
    restarted = stored_run(server.store, task, sandbox="local", queued=True)
    server.start()
    try:
        with httpx.Client(base_url=server.url, timeout=30) as c:
            for token in (auth, {"Authorization": f"Bearer {admin}"}):
                r = c.post(f"/api/v1/runs/{resumed}/resume", headers=token)
                assert r.status_code == 403, r.text
            assert "evaluator.sandbox=local" in r.json()["detail"]
            assert "\n" not in r.json()["detail"]
            # Queued when the hub stopped: the hub checks it as it starts it, and refuses it.
            run = _wait(c, restarted, ("failed",))
            assert "evaluator.sandbox=local" in run["error"]
            assert c.get(f"/api/v1/runs/{resumed}").json()["status"] == "interrupted"
            for run_id in (resumed, restarted):
                assert c.get(f"/api/v1/runs/{run_id}/programs").json() == []
    finally:
        server.stop()
    assert not marker.exists()


@pytest.mark.docker
@pytest.mark.slow
def test_runs_outside_the_task_roots_or_with_host_templates_are_refused_on_resume(
    hub: tuple[ServerProcess, dict[str, str], Path], tmp_path: Path
) -> None:
    """Findings: resuming a stored run evaluated its task folder wherever it lay, outside
    every task root; a stored ``prompt.template_dir`` names a host folder."""
    server, _, root = hub
    marker = tmp_path / "template-ran"
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    far_task = marker_task(outside, "far_min", tmp_path / "far-ran")
    in_root = marker_task(root, "near_min", tmp_path / "near-ran")
    folder = _template_folder(tmp_path, marker)
    far = stored_run(server.store, far_task)
    templated = stored_run(server.store, in_root, overrides=(f"prompt.template_dir={folder}",))
    engine = stored_run(server.store, in_root, overrides=("evaluator.canaries=false",))
    admin = {"Authorization": f"Bearer {ServiceDB(server.store).create_token('o', scope='admin')}"}
    server.start()
    try:
        with httpx.Client(base_url=server.url, headers=admin, timeout=30) as c:
            r = c.post(f"/api/v1/runs/{far}/resume")
            assert r.status_code == 403 and "outside the hub's task roots" in r.json()["detail"]
            r = c.post(f"/api/v1/runs/{templated}/resume")
            assert r.status_code == 403 and "prompt.template_dir" in r.json()["detail"]
            r = c.post(f"/api/v1/runs/{engine}/resume")
            assert r.status_code == 403 and "evaluator.canaries" in r.json()["detail"]
            time.sleep(1)
            for run_id in (far, templated, engine):
                assert c.get(f"/api/v1/runs/{run_id}").json()["status"] == "interrupted"
    finally:
        server.stop()
    assert not marker.exists()
    assert not (tmp_path / "far-ran").exists() and not (tmp_path / "near-ran").exists()


def _wait(c: httpx.Client, run_id: str, wanted: tuple[str, ...], timeout: float = 60) -> dict:
    end = time.monotonic() + timeout
    while True:
        data = dict(c.get(f"/api/v1/runs/{run_id}").json())
        if data["status"] in wanted:
            return data
        if time.monotonic() > end:
            raise AssertionError(f"run {run_id} still {data['status']}: {data['error']}")
        time.sleep(0.2)


@pytest.mark.parametrize(
    "override",
    [
        "prompt.template_dir=/etc",
        "prompt={template_dir: /etc}",
        "selection_policy.image=python-eval",
        "selection_policy.sandbox=local",
        "selection_policy.container.memory_mb=65536",
        "memory.validation.container.pids=4096",
        "evaluator.canaries=false",
        "evaluator.pool_size=64",
        "task_config=../../etc/passwd",
        "seed_from={run_id: x, program_id: y, code: z}",
        "blocks.prompt=default",
        "scaffold=/tmp/evil.yaml",
        "llm.models=[{name: gpt-4o}]",
        "llm.api_key_env=AWS_SECRET_ACCESS_KEY",
        "general={log_prompts: false, x_dir: /tmp}",
        "prompt.system_message=" + "x" * 600,
        "evaluator.max_concurrent=0",
        "evaluator.max_concurrent=100000",
        "evaluator.warm_python=false",
    ],
)
def test_overrides_that_name_host_paths_images_or_engine_settings_are_refused(
    client: TestClient, auth: dict[str, str], override: str
) -> None:
    r = client.post(
        "/api/v1/runs",
        json={"task": "function_minimization", "scaffold": "topk", "overrides": [override]},
        headers=auth,
    )
    assert r.status_code == 400, r.text
    assert client.get("/api/v1/runs").json() == []


def test_the_client_keys_still_configure_a_run(client: TestClient, auth: dict[str, str]) -> None:
    r = client.post(
        "/api/v1/runs",
        json={
            "task": "function_minimization",
            "scaffold": "topk",
            "iterations": 1,
            "overrides": [
                "evaluator.sandbox=local",
                "general.inner_retry_times=2",
                "llm.max_total_tokens=100000",
                "llm.offline.seed=3",
                "evaluator.timeout_s=20",
                "evaluator.engine_wait_s=2",
                "evaluator.max_concurrent=1",
                "prompt.max_feedback_chars=500",
                "selection_policy.num_inspirations=2",
            ],
        },
        headers=auth,
    )
    assert r.status_code == 201, r.text
