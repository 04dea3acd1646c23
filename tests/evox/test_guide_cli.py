"""Through the CLI: the guide model never sees hidden task data (a canary in a hidden file and in
the evaluator's body is in no stored prompt), and the operator texts survive SIGKILL + resume."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.evaluation.task import load_task
from harness.evaluation.visible import hidden_leaks, model_view
from harness.store.sqlite import SQLiteStore
from tests.cli.helpers import ROOT, galapagos

CANARY = "CANARY-7f3a9c-must-never-reach-a-model"
SWITCHES = ["--set", "memory.switch_interval=2", "--set", "memory.improvement_threshold=100",
            "--set", "memory.validation.stress_programs=50"]  # fmt: skip


def secret_task(tmp_path: Path, *, leak: bool = False) -> Path:
    """function_minimization with hidden reference data and a canary in the evaluator's body."""
    folder = tmp_path / "secret_fm"
    shutil.copytree(load_task("function_minimization").path, folder)
    (folder / "reference_solution.txt").write_text(f"{CANARY}\nx=-1.7, y=0.68\n")
    evaluator = folder / "evaluator.py"
    source = evaluator.read_text()
    body = f'    _reference = "{CANARY}"  # hidden: inside a function body\n'
    head, sep, rest = source.partition("def evaluate(")
    line_end = rest.index(":\n") + 2
    source = head + sep + rest[:line_end] + body + rest[line_end:]
    if leak:  # a careless author puts the data where models can read it
        source = f'"""Reference: {CANARY}"""\n' + source
    evaluator.write_text(source)
    card = folder / "task.yaml"
    text = card.read_text().replace("name: function_minimization", "name: secret_fm")
    card.write_text(
        text + "files: [reference_solution.txt]\n"
        "model_context:\n  evaluator: public\n  hidden: [reference_solution.txt]\n"
    )
    return folder


@pytest.mark.slow
def test_the_model_view_keeps_hidden_data_out_and_task_check_catches_a_leak(
    tmp_path: Path,
) -> None:
    task = load_task(str(secret_task(tmp_path)))
    assert CANARY not in model_view(task) and "def evaluate(" in model_view(task)
    assert hidden_leaks(task) == []
    leaky = load_task(str(secret_task(tmp_path / "leaky", leak=True)))
    assert hidden_leaks(leaky) == ["reference_solution.txt"]
    proc = galapagos("task", "check", str(secret_task(tmp_path / "cli", leak=True)), "--sandbox",
                     "local", "--json", timeout=300)  # fmt: skip
    report = json.loads(proc.stdout)
    check = next(c for c in report["checks"] if c["name"] == "hidden_data")
    assert check["status"] == "fail" and "reference_solution.txt" in check["detail"]


@pytest.mark.slow
def test_no_stored_prompt_of_an_evox_run_holds_hidden_data(tmp_path: Path) -> None:
    folder = secret_task(tmp_path)
    store = tmp_path / "s.sqlite"
    proc = galapagos("run", "-s", "evox", "-t", str(folder), "-i", "6", "--sandbox", "local",
                     *SWITCHES, "--json", "--store", str(store), timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    run_id = json.loads(proc.stdout)["run_id"]
    opened = SQLiteStore(store)
    exchanges = opened.llm_exchanges(run_id)
    opened.close()
    purposes = {c["purpose"] for c in exchanges}
    assert {"guide", "strategy", "propose"} <= purposes
    assert all(CANARY not in (c["prompt"] or "") for c in exchanges)
    guide = [c["prompt"] for c in exchanges if c["purpose"] == "guide"]
    assert any("def evaluate(" in p for p in guide)  # the public parts were shown


def _done(path: Path) -> int:
    if not path.exists():
        return 0
    store = SQLiteStore(path)
    try:
        runs = store.list_runs()
        return runs[0].iterations_done if runs else 0
    finally:
        store.close()


@pytest.mark.slow
def test_operator_texts_survive_sigkill_and_are_never_regenerated(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "GALAPAGOS_"))}
    first = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "run", "-s", "evox", "-t", "function_minimization",
         "-i", "12", "--sandbox", "local", *SWITCHES, "--store", str(store)],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 300
    while first.poll() is None and time.monotonic() < deadline and _done(store) < 4:
        time.sleep(0.1)
    first.send_signal(signal.SIGKILL)
    first.communicate(timeout=60)
    opened = SQLiteStore(store)
    run = opened.list_runs()[0]
    (before,) = opened.events(run.id, ["variation_operators"])
    opened.close()
    assert run.iterations_done < 12
    resumed = galapagos("resume", run.id, "--store", str(store), "--json", timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["iterations_done"] == 12
    opened = SQLiteStore(store)
    events = opened.events(run.id, ["variation_operators"])
    operator_calls = [
        c
        for c in opened.llm_exchanges(run.id)
        if "# EvoX variation operators" in (c["prompt"] or "")
    ]
    labels = [e.payload for e in opened.events(run.id, ["strategy_revived"])]
    opened.close()
    assert events == [before] and len(operator_calls) == 1
    assert before.payload["source"] == "generated"
    shown = galapagos("show", run.id, "--store", str(store))
    assert "variation operators: generated" in shown.stdout
    assert labels  # the resumed run rebuilt its strategies (and kept the texts)
