"""The hardened container settings (pure: the arguments handed to docker-py)."""

from __future__ import annotations

import pytest

from harness.sandbox.hardening import (
    RUNNER_CAPS,
    TRUSTED_DIR,
    ContainerSpec,
    container_kwargs,
    minimal_env,
)
from harness.sandbox.protocol import Limits


def spec(**kw: object) -> ContainerSpec:
    base = dict(
        image="img",
        command=("python3",),
        limits=Limits(),
        labels={"galapagos": "1"},
        env=minimal_env(pythonpath="/opt"),
    )
    return ContainerSpec(**{**base, **kw})


def test_every_container_is_locked_down() -> None:
    kw = container_kwargs(spec())
    assert kw["network_mode"] == "none" and kw["network_disabled"] is True
    assert kw["read_only"] is True
    assert kw["cap_drop"] == ["ALL"] and kw["cap_add"] == list(RUNNER_CAPS)
    assert kw["security_opt"] == ["no-new-privileges:true"]
    assert kw["mem_limit"] == kw["memswap_limit"] == "1024m"
    assert kw["pids_limit"] == 128 and kw["nano_cpus"] == 1_000_000_000
    assert {u["Name"]: u["Hard"] for u in kw["ulimits"]} == {
        "nofile": 256,
        "fsize": 64 << 20,
        "core": 0,
    }
    assert kw["log_config"]["Type"] == "none"
    assert kw["init"] is True and kw["privileged"] is False and kw["auto_remove"] is False
    assert "mode=0700" in kw["tmpfs"][TRUSTED_DIR] and "size=64m" in kw["tmpfs"]["/tmp"]
    assert kw["stdin_open"] is True and kw["detach"] is False  # => StdinOnce


def test_environment_has_no_secrets_or_host_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-honeypot")
    env = container_kwargs(spec())["environment"]
    assert "OPENAI_API_KEY" not in env and "sk-honeypot" not in env.values()
    assert env["OPENBLAS_NUM_THREADS"] == env["OMP_NUM_THREADS"] == "1"


def test_tmpfs_must_fit_inside_the_memory_limit() -> None:
    with pytest.raises(ValueError, match="tmpfs"):
        container_kwargs(spec(limits=Limits(memory_mb=64, tmpfs_mb=64)))


def test_a_gvisor_runtime_can_be_requested() -> None:
    assert container_kwargs(spec(runtime="runsc"))["runtime"] == "runsc"
    assert "runtime" not in container_kwargs(spec())
