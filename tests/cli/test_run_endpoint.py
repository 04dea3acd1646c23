"""A run keeps the LLM endpoint it started with: the resolved settings (CLI flags folded in,
provider explicit, never the key) are stored with it, and a resume uses exactly those.

A second offline server on loopback stands in for a real OpenAI-compatible endpoint."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.core.controller import Progress, RunSummary
from harness.core.store import RunRecord
from harness.llm.offline import OfflineServer, start_offline_server
from harness.runs import RunPlan, Services, execute, plan_resume, plan_run
from harness.store.sqlite import SQLiteStore

ROOT = Path(__file__).resolve().parents[2]
SECRET = "sk-must-never-be-stored"


@pytest.fixture
def stand_in() -> Iterator[OfflineServer]:
    server = start_offline_server(seed=0)
    yield server
    server.close()


def interrupted(plan: RunPlan, store: SQLiteStore) -> RunSummary:
    """Run ``plan`` and stop it after its first LLM iteration is committed."""

    async def go() -> RunSummary:
        stop = asyncio.Event()

        def on_progress(p: Progress) -> None:
            if p.iterations_done >= 1:
                stop.set()

        return await execute(plan, store, on_progress=on_progress, stop=stop)

    return asyncio.run(go())


@pytest.mark.slow
@pytest.mark.parametrize("how", ["flags", "config_file"])
def test_resume_uses_the_endpoint_the_run_started_with(
    how: str, stand_in: OfflineServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    common = {"scaffold": "topk", "task": "circle_packing", "iterations": 3, "sandbox": "local"}
    if how == "flags":
        plan = plan_run(**common, api_base=stand_in.base_url, models=("stand-in",))
    else:  # llm.api_base in the user's file, provider left unset: the run is online
        cfg = tmp_path / "online.yaml"
        cfg.write_text(f"llm:\n  api_base: {stand_in.base_url}\n  models:\n    - name: stand-in\n")
        plan = plan_run(**common, config_file=cfg)
    store = SQLiteStore(tmp_path / "s.sqlite")
    first = interrupted(plan, store)
    assert first.status == "interrupted" and 1 <= first.iterations_done < 3

    stored = store.get_run(first.run_id).config["llm"]
    assert stored["provider"] == "openai" and stored["api_base"] == stand_in.base_url
    assert [m["name"] for m in stored["models"]] == ["stand-in"]
    assert SECRET not in json.dumps(store.get_run(first.run_id).config)

    seen: list[tuple[str, str]] = []

    def on_start(run: RunRecord, services: Services) -> None:
        seen.append((services.llm_provider, services.llm_description))

    resumed = asyncio.run(execute(plan_resume(store, first.run_id), store, on_start=on_start))
    assert resumed.status == "completed" and resumed.iterations_done == 3
    assert seen == [
        (
            "openai",
            f"{stand_in.base_url}: stand-in (weight 1); "
            "price unknown for stand-in (cost not counted)",
        )
    ]
    assert stand_in.requests == 3  # every LLM call of both sessions went to the stand-in
    assert {c["model"] for c in store.llm_calls(first.run_id)} == {"stand-in"}


def test_resume_reads_configs_stored_with_an_implicit_provider(tmp_path: Path) -> None:
    # Stores written before the provider was made explicit hold the dumped default
    # "provider: offline" next to the api_base the run actually used.
    plan = plan_run(scaffold="topk", task="circle_packing", iterations=2, sandbox="local")
    config = plan.config.model_dump(mode="json")
    config["llm"].update(provider="offline", api_base="http://127.0.0.1:9/v1")
    config["llm"]["models"] = [{"name": "m"}]
    store = SQLiteStore(tmp_path / "s.sqlite")
    store.create_run(
        RunRecord(
            id="old",
            scaffold="topk",
            task="circle_packing",
            task_path="",
            config=config,
            seed=0,
            max_iterations=2,
            status="interrupted",
        )
    )
    resumed = plan_resume(store, "old")
    assert resumed.config.llm.provider == "openai"
    assert resumed.config.llm.api_base == "http://127.0.0.1:9/v1"


@pytest.mark.slow
def test_cli_names_the_endpoint_configured_in_a_file(
    stand_in: OfflineServer, tmp_path: Path
) -> None:
    cfg = tmp_path / "online.yaml"
    cfg.write_text(f"llm:\n  api_base: {stand_in.base_url}\n  models:\n    - name: stand-in\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env["GALAPAGOS_STORE"] = str(tmp_path / "s.sqlite")
    proc = subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", "-s", "topk", "-t", "circle_packing"]
        + ["-i", "1", "--sandbox", "local", "--config", str(cfg), "--json"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "NOT a language model" not in proc.stderr
    assert f"LLM: {stand_in.base_url}: stand-in" in proc.stderr
    assert stand_in.requests == 1
