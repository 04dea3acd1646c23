"""`galapagos sandbox build|doctor|gc`: data on stdout, messages on stderr, exit codes."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from harness.cli import app

pytestmark = pytest.mark.docker


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def test_build_prints_tags_and_is_idempotent(
    runner: CliRunner, sandbox_images: dict[str, str]
) -> None:
    result = runner.invoke(app, ["sandbox", "build", "python-eval"])
    assert result.exit_code == 0, result.stderr
    assert f"python-eval\t{sandbox_images['python-eval']}" in result.stdout
    assert "up to date" in result.stderr


def test_build_of_an_unknown_image_is_bad_input(runner: CliRunner) -> None:
    result = runner.invoke(app, ["sandbox", "build", "nope"])
    assert result.exit_code == 2 and "valid images" in result.stderr and result.stdout == ""


def test_doctor_runs_the_canaries(runner: CliRunner, sandbox_images: dict[str, str]) -> None:
    result = runner.invoke(app, ["sandbox", "doctor"])
    assert result.exit_code == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert {"canary:timeout", "canary:memory", "canary:network"} <= {
        line.split("\t")[1] for line in lines
    }
    assert all(line.startswith("ok\t") for line in lines)


def test_doctor_reports_an_unreachable_engine_with_a_remedy(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    result = runner.invoke(app, ["sandbox", "doctor"])
    assert result.exit_code == 1
    assert "scripts/docker-engine.sh" in result.stderr


def test_gc_exits_cleanly(runner: CliRunner) -> None:
    result = runner.invoke(app, ["sandbox", "gc"])
    assert result.exit_code == 0, result.stderr
    assert "whose owner process is dead" in result.stderr


def test_gc_of_an_unknown_run_says_it_removed_nothing(runner: CliRunner) -> None:
    result = runner.invoke(app, ["sandbox", "gc", "--run", "nosuch"])
    assert result.exit_code == 0, result.stderr
    assert "0 containers of run nosuch" in result.stderr


def test_gc_json_summarises_what_it_removed(runner: CliRunner) -> None:
    result = runner.invoke(app, ["sandbox", "gc", "--run", "nosuch", "--json"])
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["run_id"] == "nosuch" and summary["run"] == []
    assert isinstance(summary["orphans"], list) and summary["images"] == []


def test_gc_can_remove_one_run(runner: CliRunner, sandbox_images: dict[str, str]) -> None:
    import docker

    from harness.sandbox.hardening import ContainerSpec, create_hardened_container
    from harness.sandbox.images import image_tag
    from harness.sandbox.ownership import owner_id
    from harness.sandbox.protocol import Limits

    client = docker.from_env()
    labels = {"galapagos": "1", "galapagos.owner": owner_id(), "galapagos.run": "gc-test-run"}
    spec = ContainerSpec(
        image=image_tag("python-eval"), command=("true",), limits=Limits(), labels=labels, env={}
    )
    container = create_hardened_container(client, spec)
    result = runner.invoke(app, ["sandbox", "gc", "--run", "gc-test-run"])
    assert result.exit_code == 0, result.stderr
    assert f"container\t{container.name}" in result.stdout
    assert "1 container of run gc-test-run" in result.stderr


def test_run_fails_closed_when_a_startup_canary_is_not_contained(
    runner: CliRunner,
    sandbox_images: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path,
) -> None:
    """A run starts with canaries in real containers; one that gets through (simulated here by
    a verdict that can never hold) stops the run before any candidate or LLM call: exit 1, a
    line naming the canary and the doctor, nothing stored."""
    from harness.sandbox import doctor

    source, statuses, what, _ = doctor.CANARIES["forgery"]
    monkeypatch.setitem(doctor.CANARIES, "forgery", (source, statuses, what, lambda r: False))
    store = tmp_path / "store.sqlite"
    result = runner.invoke(
        app,
        ["run", "-s", "best_of_n", "-t", "function_minimization", "-i", "1"]
        + ["--store", str(store)],
    )
    assert result.exit_code == 1, result.output
    assert "sandbox self-test failed" in result.stderr and "canary:forgery" in result.stderr
    assert "galapagos sandbox doctor" in result.stderr and "Traceback" not in result.output
    listed = runner.invoke(app, ["runs", "--json", "--store", str(store)])
    assert listed.exit_code == 0 and listed.stdout.strip() == "[]"


def test_run_starts_after_the_startup_canaries(
    runner: CliRunner, sandbox_images: dict[str, str], tmp_path
) -> None:
    store = tmp_path / "store.sqlite"
    result = runner.invoke(
        app,
        ["run", "-s", "best_of_n", "-t", "function_minimization", "-i", "1", "--json"]
        + ["--store", str(store)],
    )
    assert result.exit_code == 0, result.output
    assert '"status": "completed"' in result.stdout
