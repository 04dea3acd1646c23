"""The hub names the model of every run, shows cost it does not know as unknown, never pools
runs of different models in one leaderboard row unless asked, and never ranks a failed run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from harness.core.records import LLMCall
from harness.core.store import IterationCommit, LLMCallRow, RunRecord
from harness.store.sqlite import SQLiteStore

ONLINE = {
    "llm": {
        "provider": "openai",
        "api_base": "https://user:secret@gw.example.com/v1",
        "models": [{"name": "gpt-4.1-mini", "input_cost_per_mtok": 0.4,
                    "output_cost_per_mtok": 1.6}],
        "price_table": "2026-04-23",
    }
}  # fmt: skip
LOCAL = {"llm": {"provider": "openai", "api_base": "http://127.0.0.1:8000/v1",
                 "models": [{"name": "my-qwen"}]}}  # fmt: skip


def _run(store: SQLiteStore, run_id: str, config: dict[str, Any], **kw: Any) -> None:
    store.create_run(
        RunRecord(run_id, "topk", "circle_packing", "", config, 0, 1, **kw)  # type: ignore[arg-type]
    )


def test_runs_and_the_leaderboard_name_the_model(client: TestClient, hub_store: Path) -> None:
    store = SQLiteStore(hub_store)
    _run(store, "r-offline", {}, status="completed", best_score=0.9)
    _run(store, "r-online", ONLINE, status="completed", best_score=0.5, cost=0.25)
    _run(store, "r-local", LOCAL, status="completed", best_score=0.7)
    _run(store, "r-failed", {}, status="failed", best_score=0.0, error="seed broken")
    call = LLMCall(model="gpt-4.1-mini", text="x", prompt_tokens=100, completion_tokens=10,
                   cost=0.25)  # fmt: skip
    store.commit_iteration(
        IterationCommit("r-online", 1, "ok", llm_calls=[LLMCallRow(1, 0, call)], best_score=0.5)
    )

    runs = {r["run_id"]: r for r in client.get("/api/v1/runs").json()}
    online = runs["r-online"]["llm"]
    assert (online["label"], online["provider"], online["host"]) == (
        "gpt-4.1-mini", "openai-compatible", "gw.example.com"
    )  # fmt: skip
    assert online["endpoint"] == "https://***@gw.example.com/v1"  # never the credentials
    assert runs["r-offline"]["llm"]["label"] == "offline model"
    assert runs["r-local"]["cost_known"] is False and runs["r-local"]["llm"]["price_unknown"]

    page = client.get("/runs").text
    assert "gpt-4.1-mini" in page and "gw.example.com" in page and "secret" not in page
    run_page = client.get("/runs/r-online").text
    assert 'id="model"' in run_page and "cost-by-iteration" in run_page
    assert "price table reviewed 2026-04-23" in run_page
    assert ">unknown<" in client.get("/runs/r-local").text

    board = client.get("/leaderboard").text
    # One row per model: the offline run, the online run and the local model stay apart, and
    # the failed run is counted (in its model's row) but never ranked or scored.
    assert board.count('<td class="model">') == 3
    assert "(1 failed)" in board and "0.9" in board
    store.create_run(
        RunRecord("r-broken", "topk", "t_broken", "", {}, 0, 1, status="failed", best_score=0.0)
    )
    broken = client.get("/leaderboard").text.split("t_broken", 2)[-1]
    assert "<tr><td>-</td>" in broken and "<tr><td>1</td>" not in broken  # not ranked first
    pooled = client.get("/leaderboard?pool_models=true").text
    assert pooled.count('<td class="model">') == 2 and "all models" in pooled  # 1 per task
    assert "secret" not in board


def test_without_a_cluster_the_cluster_page_says_the_queue_runs_here(client: TestClient) -> None:
    page = client.get("/cluster")
    assert page.status_code == 200 and 'id="no-cluster"' in page.text
    assert 'href="/cluster"' not in page.text  # no Cluster tab without --ray-address
