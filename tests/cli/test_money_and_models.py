"""Cost you can pay for and results you can attribute: a priced model costs money and its cap
stops the run; a cap that cannot be enforced is refused; every listing names the model.

End to end through the ``galapagos`` command; a stand-in endpoint (the offline model's server
under a real model's name) answers on loopback; candidates run in the local sandbox (Docker is
not what these tests are about)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.llm.offline import OfflineServer
from harness.store.sqlite import SQLiteStore
from tests.cli.helpers import galapagos
from tests.cli.results_helpers import stand_in

RUN = ("run", "-s", "topk", "-t", "circle_packing", "--sandbox", "local", "--json")


@pytest.fixture
def endpoint() -> Iterator[OfflineServer]:
    server = stand_in()
    yield server
    server.close()


@pytest.mark.slow
def test_a_priced_model_costs_money_and_its_cap_stops_the_run(
    tmp_path: Path, endpoint: OfflineServer
) -> None:
    store = tmp_path / "s.sqlite"
    proc = galapagos(
        *RUN, "-i", "6", "--api-base", endpoint.base_url, "--model", "gpt-4.1-mini",
        "--max-cost", "0.001", store=store, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    run = json.loads(proc.stdout)
    assert run["status"] == "budget_exhausted" and run["iterations_done"] < 6
    calls = SQLiteStore(store).llm_calls(run["run_id"])
    priced = sum(c["prompt_tokens"] * 0.40 + c["completion_tokens"] * 1.60 for c in calls) / 1e6
    assert run["cost"] == pytest.approx(priced) and run["cost"] >= 0.001
    assert run["cost_known"] is True
    assert run["llm"]["prices"] == {"gpt-4.1-mini": {"input": 0.40, "output": 1.60}}
    assert run["llm"]["price_table"]  # the table's review date is stored with the run

    shown = json.loads(galapagos("show", run["run_id"], "--json", store=store).stdout)
    usage = shown["llm_usage"]
    assert sum(i["cost"] for i in usage["by_iteration"]) == pytest.approx(run["cost"])
    assert [m["model"] for m in usage["by_model"]] == ["gpt-4.1-mini"]
    text = galapagos("show", run["run_id"], store=store).stdout
    assert "cost per iteration: mean" in text and "price table reviewed" in text


@pytest.mark.parametrize("how", ["--max-cost", "--set"])
def test_a_cost_cap_with_an_unknown_price_is_refused_in_one_line(
    tmp_path: Path, endpoint: OfflineServer, how: str
) -> None:
    store = tmp_path / "s.sqlite"
    cap = ["--max-cost", "1"] if how == "--max-cost" else ["--set", "llm.max_cost=1"]
    proc = galapagos(
        *RUN, "-i", "2", "--api-base", endpoint.base_url, "--model", "my-own-model", *cap,
        store=store,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(
        "error: llm.max_cost=1 cannot be enforced: the price of my-own-model"
    )
    assert not store.exists()

    # Its price in the config makes the cap enforceable.
    priced = tmp_path / "priced.yaml"
    priced.write_text(
        "llm:\n  models:\n    - name: my-own-model\n      input_cost_per_mtok: 3.0\n"
        "      output_cost_per_mtok: 6.0\n"
    )
    proc = galapagos(
        *RUN, "-i", "1", "--api-base", endpoint.base_url, "-c", str(priced), *cap, store=store
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["cost"] > 0


@pytest.mark.slow
def test_a_resume_with_a_cost_cap_over_an_unknown_price_is_refused(
    tmp_path: Path, endpoint: OfflineServer
) -> None:
    store = tmp_path / "s.sqlite"
    proc = galapagos(
        *RUN, "-i", "1", "--api-base", endpoint.base_url, "--model", "my-own-model", store=store
    )
    assert proc.returncode == 0, proc.stderr
    assert (
        "cost unknown (no price for my-own-model)"
        in galapagos("show", json.loads(proc.stdout)["run_id"], store=store).stdout
    )
    run_id = json.loads(proc.stdout)["run_id"]
    proc = galapagos("resume", run_id, "--iterations", "2", "--max-cost", "1", store=store)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: llm.max_cost=1 cannot be enforced: the price of my-own")


def test_an_endpoint_that_is_not_a_url_is_bad_input(tmp_path: Path) -> None:
    proc = galapagos(*RUN, "--api-base", "not-a-url", "--model", "m", store=tmp_path / "s.sqlite")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().startswith("error: the LLM endpoint 'not-a-url' is not an http(s)")
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_every_listing_names_the_model_of_each_run(tmp_path: Path, endpoint: OfflineServer) -> None:
    store = tmp_path / "s.sqlite"
    offline = galapagos(*RUN, "-i", "1", store=store)
    online = galapagos(
        *RUN, "-i", "1", "--api-base", endpoint.base_url, "--model", "gpt-4.1-mini", store=store
    )
    assert offline.returncode == 0 and online.returncode == 0, offline.stderr + online.stderr
    host = f"127.0.0.1:{endpoint.port}"

    listed = {
        r["run_id"]: r["llm"] for r in json.loads(galapagos("runs", "--json", store=store).stdout)
    }
    mine = listed[json.loads(online.stdout)["run_id"]]
    assert (mine["label"], mine["host"], mine["provider"]) == (
        "gpt-4.1-mini",
        host,
        "local endpoint",
    )
    assert listed[json.loads(offline.stdout)["run_id"]]["label"] == "offline model"

    table = galapagos("runs", store=store).stdout
    assert f"gpt-4.1-mini @ {host}" in table and "offline model" in table
    assert (
        "model gpt-4.1-mini @"
        in galapagos("show", json.loads(online.stdout)["run_id"], store=store).stdout
    )

    tasks = {t["name"]: t for t in json.loads(galapagos("tasks", "--json", store=store).stdout)}
    best = tasks["circle_packing"]
    assert best["best_stored_model"] in ("gpt-4.1-mini", "offline model")
    assert best["best_stored_llm"]["label"] == best["best_stored_model"]
    assert "model" in galapagos("tasks", store=store).stdout.splitlines()[0]
