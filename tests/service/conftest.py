"""Fixtures for the hub: a store with a token, a task root holding a task whose program text is
hostile HTML, and an app served in-process (FastAPI's TestClient) or as a real server."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from harness.evaluation.task import tasks_root
from harness.service import ServiceSettings, create_app
from harness.service._db import ServiceDB
from harness.store.sqlite import SQLiteStore

#: Text a model could write into a program: it must reach the browser as text, never as HTML.
HOSTILE = (
    '# </script><script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
    "<b>bold?</b> &amp; {{ 7*7 }}"
)
ROOT = Path(__file__).resolve().parents[2]


def hostile_task_root(base: Path) -> Path:
    """A task root with ``hostile_min``: function_minimization whose program carries HOSTILE."""
    root = base / "task_root"
    folder = root / "hostile_min"
    shutil.copytree(tasks_root() / "function_minimization", folder)
    card = (folder / "task.yaml").read_text()
    (folder / "task.yaml").write_text(
        card.replace("name: function_minimization", "name: hostile_min", 1)
    )
    program = folder / "initial_program.py"
    program.write_text(HOSTILE + "\n" + program.read_text())
    return root


@pytest.fixture
def hub_store(tmp_path: Path) -> Path:
    path = tmp_path / "hub.sqlite"
    SQLiteStore(path).close()
    return path


@pytest.fixture
def token(hub_store: Path) -> str:
    return str(ServiceDB(hub_store).create_token("tester"))


@pytest.fixture
def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def settings(tmp_path: Path, **kw: Any) -> ServiceSettings:
    return ServiceSettings(
        task_roots=(hostile_task_root(tmp_path),),
        allow_local_sandbox=kw.pop("allow_local_sandbox", True),
        workers=kw.pop("workers", 1),
        poll_s=0.2,
        public_names=kw.pop("public_names", ("testserver",)),  # FastAPI's TestClient's Host
        **kw,
    )


@pytest.fixture
def client(hub_store: Path, tmp_path: Path, token: str) -> Iterator[TestClient]:
    store = SQLiteStore(hub_store)
    with TestClient(create_app(store, settings(tmp_path))) as c:
        yield c
    store.close()


#: A small fast run: the offline model, host subprocesses (the hub's restart and API are under
#: test here, not the sandbox; the docker-marked test runs one through Docker).
LOCAL = "evaluator.sandbox=local"


def launch(c: Any, headers: dict[str, str], **body: Any) -> str:
    body.setdefault("task", "function_minimization")
    body.setdefault("scaffold", "topk")
    body.setdefault("iterations", 3)
    body.setdefault("overrides", [LOCAL])
    r = c.post("/api/v1/runs", json=body, headers=headers)
    assert r.status_code == 201, r.text
    return str(r.json()["run"]["run_id"])


def wait_status(c: Any, run_id: str, wanted: tuple[str, ...], timeout: float = 120) -> dict:
    end = time.monotonic() + timeout
    while True:
        data = c.get(f"/api/v1/runs/{run_id}").json()
        if data["status"] in wanted:
            return dict(data)
        if time.monotonic() > end:
            raise AssertionError(f"run {run_id} still {data['status']} after {timeout}s")
        time.sleep(0.1)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class ServerProcess:
    """``galapagos serve`` as a real process on a free loopback port (``local_sandbox``: with
    ``--allow-local-sandbox``, as the restart tests use for speed)."""

    def __init__(
        self,
        store: Path,
        task_root: Path,
        *extra: str,
        workers: int = 1,
        local_sandbox: bool = True,
    ) -> None:
        self.store = store
        self.port = free_port()
        scheme = "https" if "--tls-cert" in extra else "http"
        self.url = f"{scheme}://127.0.0.1:{self.port}"
        self.args = [
            sys.executable,
            "-m",
            "harness.cli",
            "serve",
            "--port",
            str(self.port),
            "--store",
            str(store),
            "--task-root",
            str(task_root),
            *(["--allow-local-sandbox"] if local_sandbox else []),
            "--workers",
            str(workers),
            *extra,
        ]
        self.log = store.parent / f"serve-{self.port}.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> ServerProcess:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                self.args,
                stdout=log,
                stderr=log,
                cwd=ROOT,
                env=env,
                # As started from a terminal: Ctrl-C's default disposition, whatever ours is (a
                # background job, as under CI, inherits SIGINT ignored, hiding what a user sees).
                preexec_fn=_default_sigint,
            )
        end = time.monotonic() + 60
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise AssertionError(f"server exited: {self.log.read_text()[-2000:]}")
            try:
                status = httpx.get(self.url + "/api/v1/status", timeout=2, verify=False)
                if status.status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise AssertionError(f"server did not start: {self.log.read_text()[-2000:]}")

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(10)

    def stop(self) -> float:
        """SIGINT, then the seconds it took to exit."""
        assert self.proc is not None
        started = time.monotonic()
        self.proc.send_signal(2)
        self.proc.wait(30)
        return time.monotonic() - started


def marker_task(root: Path, name: str, marker: Path) -> Path:
    """A copy of function_minimization in ``root`` whose program, wherever it runs, tries to
    write ``marker``: the file appears only if a candidate ran on this host."""
    folder = root / name
    shutil.copytree(tasks_root() / "function_minimization", folder)
    card = (folder / "task.yaml").read_text()
    (folder / "task.yaml").write_text(card.replace("name: function_minimization", f"name: {name}"))
    program = folder / "initial_program.py"
    probe = (
        "import pathlib as _pathlib\n"
        "try:\n"
        f"    _pathlib.Path({str(marker)!r}).write_text('a candidate ran on the host')\n"
        "except OSError:\n"
        "    pass\n"
    )
    program.write_text(probe + program.read_text())
    return folder


def stored_run(
    store: Path,
    task: Path,
    *,
    overrides: tuple[str, ...] = (),
    sandbox: str | None = None,
    status: str = "interrupted",
    queued: bool = False,
    scaffold: str = "topk",
) -> str:
    """A run as ``galapagos run`` (or anyone with the store file) could have stored it: made
    by the library, not by the hub, with whatever config it says."""
    from harness.core.store import RunRecord
    from harness.runs import new_run_id, plan_run

    plan = plan_run(
        scaffold=scaffold,
        task=str(task),
        overrides=list(overrides),
        iterations=2,
        sandbox=sandbox,
    )
    record = RunRecord(
        id=new_run_id(),
        scaffold=plan.spec.name,
        task=plan.task.name,
        task_path=str(plan.task.path),
        config=plan.config.model_dump(mode="json"),
        seed=plan.config.seed,
        max_iterations=plan.config.general.max_iterations,
        status=status,
        owner="",
        task_hash=plan.task.digest(),
    )
    writer = SQLiteStore(store)
    try:
        writer.create_run(record)
    finally:
        writer.close()
    if queued:
        ServiceDB(store).enqueue(record.id, {})
    return record.id
