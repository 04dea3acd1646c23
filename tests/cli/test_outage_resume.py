"""An endpoint outage costs no iteration: the iterations it left without a proposal stay not
done, and a resume on the moved endpoint (``resume --api-base``) runs them, recorded as such;
the run then ends as a run that had no outage (the stand-in answers as the offline model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.store.sqlite import SQLiteStore
from tests.cli.helpers import galapagos
from tests.cli.results_helpers import Gate, stand_in


@pytest.mark.slow
def test_an_outage_costs_no_iteration_and_resume_continues_on_the_moved_endpoint(
    tmp_path: Path,
) -> None:
    store = tmp_path / "s.sqlite"
    gate = Gate(ok=3)  # iterations 1-3 are answered, then the endpoint goes down
    down, moved = stand_in(gate), stand_in()
    try:
        proc = galapagos(
            "run", "-s", "topk", "-t", "circle_packing", "-i", "10", "--sandbox", "local",
            "--api-base", down.base_url, "--model", "gpt-4.1-mini", "--set", "llm.retries=0",
            "--json", store=store, timeout=300,
        )  # fmt: skip
        assert proc.returncode == 1, proc.stderr
        first = json.loads(proc.stdout)
        assert first["status"] == "failed"
        assert "5 consecutive iterations failed for the same reason (LLM:" in first["error"]
        # The five iterations the outage hit got no proposal: they are not done.
        assert first["iterations_done"] == 3 and first["iterations_not_done"] == 5
        assert "5 of them got no proposal and count as not done" in proc.stderr
        assert len(gate.refused) == 5

        proc = galapagos(
            "resume", first["run_id"], "--api-base", moved.base_url, "--json", store=store,
            timeout=300,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        done = json.loads(proc.stdout)
        assert done["status"] == "completed" and done["iterations_done"] == 10
        assert done["iterations_failed"] == 0  # the outage's iterations ran again, and passed
    finally:
        down.close()
        moved.close()
    whole_store = tmp_path / "whole.sqlite"
    healthy = stand_in()
    try:
        proc = galapagos(
            "run", "-s", "topk", "-t", "circle_packing", "-i", "10", "--sandbox", "local",
            "--api-base", healthy.base_url, "--model", "gpt-4.1-mini", "--json",
            store=whole_store, timeout=300,
        )  # fmt: skip
    finally:
        healthy.close()
    whole = json.loads(proc.stdout)["run_id"]
    lineage = [(p.id, p.parent_id, p.code) for p in SQLiteStore(whole_store).programs(whole)]
    st = SQLiteStore(store)
    assert [(p.id, p.parent_id, p.code) for p in st.programs(first["run_id"])] == lineage
    admitted = sorted(e.iteration for e in st.events(first["run_id"], ["admit"]) if e.iteration)
    assert admitted == list(range(1, 11))  # every iteration 1..10 produced its child
    moves = [e.payload for e in st.events(first["run_id"], ["endpoint_changed"])]
    assert len(moves) == 1
    assert moves[0]["from"]["api_base"] == down.base_url
    assert moves[0]["to"] == {
        "provider": "openai", "api_base": moved.base_url, "models": ["gpt-4.1-mini"]
    }  # fmt: skip
    assert st.get_run(first["run_id"]).config["llm"]["api_base"] == moved.base_url
