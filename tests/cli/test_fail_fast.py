"""A broken setup fails before it spends anything: an endpoint that is not an LLM is refused at
start, and iterations that keep failing for the same infrastructure reason stop the run."""

from __future__ import annotations

import asyncio
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.core.config import GeneralConfig
from harness.core.controller import Controller
from harness.core.errors import LLMError
from harness.core.records import LLMCall, Prompt
from harness.store.sqlite import SQLiteStore
from tests.cli.helpers import galapagos
from tests.core.test_controller import make
from tests.fakes import EchoModel


@pytest.fixture
def static_files(tmp_path: Path) -> Iterator[str]:
    """``python -m http.server`` on loopback: answers GET, 501 to POST — not an LLM."""
    (tmp_path / "index.html").write_text("<h1>not an LLM</h1>")
    handler = lambda *a, **k: http.server.SimpleHTTPRequestHandler(  # noqa: E731
        *a, directory=str(tmp_path), **k
    )
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_an_endpoint_that_is_not_an_llm_is_refused_at_start(
    static_files: str, tmp_path: Path
) -> None:
    store = tmp_path / "s.sqlite"
    proc = galapagos(
        "run", "-s", "topk", "-t", "function_minimization", "-i", "3", "--sandbox", "local",
        "--api-base", static_files, "--model", "gpt-x", "--store", str(store), timeout=60,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    line = proc.stderr.strip().splitlines()[-1]
    assert "does not speak the OpenAI chat-completions protocol" in line
    assert "HTTP 501" in line and "--api-base" in line
    if store.exists():  # nothing was run, so nothing was stored
        opened = SQLiteStore(store)
        assert opened.list_runs() == []
        opened.close()


class DownModel(EchoModel):
    """An endpoint that is down: every call fails the same way."""

    async def generate(self, prompt: Prompt, *, purpose: str, seed: int) -> LLMCall:
        self.calls.append(prompt.messages())
        raise LLMError("LLM endpoint http://127.0.0.1:9/v1 is unreachable (connection refused)")


def test_repeated_infrastructure_failures_stop_the_run_as_failed(tmp_path: Path) -> None:
    ctl, store, _ = make(tmp_path, iterations=20)
    ctl.model = DownModel()
    ctl.general = GeneralConfig(max_iterations=20, max_consecutive_infra_failures=3)
    summary = asyncio.run(ctl.run_to_end())
    assert summary.status == "failed"
    run = store.get_run("r1")
    # The three iterations got no proposal: committed (their calls are recorded) but not done,
    # so a resume runs them again instead of losing them to the outage.
    assert run.status == "failed" and run.iterations_done == 0
    assert "3 consecutive iterations failed for the same reason (LLM: LLM endpoint" in run.error
    assert "galapagos resume r1" in run.error
    assert len(ctl.model.calls) == 3  # nothing after the third
    assert len(store.llm_calls("r1")) == 3


def test_a_run_of_failures_with_different_causes_goes_on(tmp_path: Path) -> None:
    class Flaky(EchoModel):
        async def generate(self, prompt: Prompt, *, purpose: str, seed: int) -> LLMCall:
            self.calls.append(prompt.messages())
            raise LLMError(f"HTTP 50{len(self.calls) % 2}: transient")

    ctl, store, _ = make(tmp_path, iterations=6)
    ctl.model = Flaky()
    ctl.general = GeneralConfig(max_iterations=6, max_consecutive_infra_failures=2)
    summary = asyncio.run(ctl.run_to_end())
    # Never twice the same cause in a row: the breaker does not stop it.  Every iteration got
    # no proposal and counts as not done: the run stops interrupted (resumable) with the
    # reason, instead of "completed" with nothing searched.
    assert summary.status == "interrupted" and summary.iterations_done == 0
    assert len(ctl.model.calls) == 6
    run = store.get_run("r1")
    assert run.error.startswith("6 iteration(s) got no proposal (1, 2, 3, 4, 5, 6: LLM: HTTP 50")
    assert "galapagos resume r1" in run.error


def test_the_seed_must_evaluate_before_any_llm_call(tmp_path: Path) -> None:
    from tests.fakes import ScoreEvaluator

    ctl, store, model = make(tmp_path, evaluator=ScoreEvaluator(fail=lambda it: it == 0))
    summary = asyncio.run(ctl.run_to_end())
    assert summary.status == "failed" and model.calls == []
    assert "the seed program could not be evaluated (invalid: injected failure)" in (
        store.get_run("r1").error
    )
    # Resuming the same broken run fails the same way, still without an LLM call.
    ctl2 = Controller(
        ctl.scaffold,
        store=store,
        run=store.get_run("r1"),
        model=model,
        meter=ctl.meter,
        general=ctl.general,
        seed_code="score = 0.5\n",
    )
    ctl2.restore()
    assert asyncio.run(ctl2.run_to_end()).status == "failed" and model.calls == []


def test_an_evaluator_with_a_syntax_error_stops_the_run_before_any_llm_call(
    tmp_path: Path,
) -> None:
    import json
    import shutil

    from harness.evaluation.task import load_task
    from harness.store.sqlite import SQLiteStore

    folder = tmp_path / "broken"
    shutil.copytree(load_task("function_minimization").path, folder)
    evaluator = folder / "evaluator.py"
    evaluator.write_text(evaluator.read_text() + "\ndef broken(:\n    pass\n")
    store = tmp_path / "s.sqlite"
    proc = galapagos(
        "run", "-s", "topk", "-t", str(folder), "-i", "15", "--sandbox", "local", "--json",
        "--store", str(store), timeout=120,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["status"] == "failed" and summary["iterations_done"] == 0
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "SyntaxError" in errors[0] and "no LLM call" in errors[0]
    opened = SQLiteStore(store)
    assert opened.llm_calls(summary["run_id"]) == []
    opened.close()
