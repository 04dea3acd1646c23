"""A run stopped by its budget resumes with a new cap: ``galapagos resume --max-tokens``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.store.sqlite import SQLiteStore
from tests.cli.helpers import galapagos


@pytest.mark.slow
def test_resume_with_a_higher_token_cap_continues_a_budget_stopped_run(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    first = galapagos(
        "run", "-s", "topk", "-t", "circle_packing", "-i", "3", "--sandbox", "local",
        "--set", "llm.max_total_tokens=2000", "--json",
        store=store, timeout=300,
    )  # fmt: skip
    assert first.returncode == 0, first.stderr
    stopped = json.loads(first.stdout)
    run_id, used = stopped["run_id"], stopped["tokens"]
    assert stopped["status"] == "budget_exhausted" and stopped["iterations_done"] < 3
    # A call starts under the cap and may end over it; the next one is never started.
    assert used >= 2000
    assert "galapagos resume" in stopped["error"] and "--max-tokens" in stopped["error"]

    again = galapagos("resume", run_id, store=store)
    assert again.returncode == 2 and "--max-tokens N, N above" in again.stderr

    too_low = galapagos("resume", run_id, "--max-tokens", str(used), store=store)
    assert too_low.returncode == 2
    assert f"has used {used} tokens" in too_low.stderr and "Traceback" not in too_low.stderr

    resumed = galapagos(
        "resume", run_id, "--max-tokens", "1000000", "--json", store=store, timeout=300
    )
    assert resumed.returncode == 0, resumed.stderr
    done = json.loads(resumed.stdout)
    assert done["status"] == "completed" and done["iterations_done"] == 3
    assert done["tokens"] > used  # the totals carried over and kept counting

    st = SQLiteStore(store)
    try:
        assert st.get_run(run_id).config["llm"]["max_total_tokens"] == 1_000_000
        changes = [e.payload for e in st.events(run_id, ["budget_changed"])]
        assert changes == [{"max_total_tokens": {"from": 2000, "to": 1_000_000}}]
        calls = st.llm_calls(run_id)
        assert sum(c["prompt_tokens"] + c["completion_tokens"] for c in calls) == done["tokens"]
    finally:
        st.close()


@pytest.mark.slow
def test_resume_refuses_a_cost_cap_that_is_not_a_positive_number(tmp_path: Path) -> None:
    proc = galapagos("resume", "whatever", "--max-cost", "nan", store=tmp_path / "s.sqlite")
    assert proc.returncode == 2
    assert "--max-cost" in proc.stderr
