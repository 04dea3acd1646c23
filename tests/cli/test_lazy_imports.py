"""A command imports the block modules it uses and no others (issue 27: start-up cost).

Each case runs the real CLI in a fresh interpreter and reads ``sys.modules`` when it ends: the
block catalogue imports ``harness.components``, the scaffold's own package, and another scaffold
package only when the composition names one of its blocks; a run never imports the ``openai``
SDK (its own small HTTP transport talks to the endpoint)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.core.registry import list_scaffolds
from tests.cli.helpers import ROOT, cli_env

#: Runs the CLI with the given arguments, then prints the scaffold and exporter modules loaded.
PROBE = """
import json, sys
import harness.cli._output as output

def report(code):
    loaded = sorted(m for m in sys.modules if m.startswith(("scaffolds.", "harness.export")))
    sdk = sorted(m for m in sys.modules if m == "openai" or m.startswith("openai."))
    print(json.dumps({"code": code, "loaded": loaded, "sdk": sdk}), file=sys.stderr, flush=True)

exit_now = output._exit_now
def reported_exit(code):  # a run ends with os._exit: report just before
    report(code or 0)
    exit_now(code)
output._exit_now = reported_exit
sys.argv = ["galapagos", *sys.argv[1:]]
from harness.cli import main
try:
    main()
except SystemExit as exc:
    report(exc.code or 0)
"""


def probe(*args: str, store: Path) -> tuple[dict[str, Any], subprocess.CompletedProcess]:
    """The CLI's exit code and the modules it loaded (``loaded``, ``sdk``), and the process."""
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=ROOT,
        env=cli_env(store),
        capture_output=True,
        text=True,
        timeout=300,
    )
    last = json.loads(proc.stderr.strip().splitlines()[-1])
    assert last["code"] == 0, proc.stderr[-2000:]
    return last, proc


def loaded_by(*args: str, store: Path) -> tuple[set[str], subprocess.CompletedProcess]:
    last, proc = probe(*args, store=store)
    return {m.split(".")[1] if m.startswith("scaffolds.") else m for m in last["loaded"]}, proc


def test_listing_scaffolds_imports_no_block_module(tmp_path: Path) -> None:
    loaded, proc = loaded_by("scaffolds", "--json", store=tmp_path / "s.sqlite")
    assert loaded == set()
    listed = {row["name"]: row["composition"] for row in json.loads(proc.stdout)}
    assert sorted(listed) == list_scaffolds()
    assert listed["adaevolve"]["memory"] == "adaevolve_paradigms"


def test_listing_blocks_imports_every_scaffold_package(tmp_path: Path) -> None:
    loaded, proc = loaded_by("blocks", "--json", store=tmp_path / "s.sqlite")
    assert {"adaevolve", "evox", "openevolve"} <= loaded
    names = {row["name"] for row in json.loads(proc.stdout)}
    assert {"adaevolve_paradigms", "map_elites_islands", "evolved_strategy_store"} <= names


@pytest.mark.slow
def test_a_run_imports_only_its_own_scaffold_and_not_the_exporter(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    run = ("run", "-t", "function_minimization", "-i", "2", "--sandbox", "local", "--json")
    loaded, proc = loaded_by(*run, "-s", "best_of_n", store=store)
    assert loaded == {"best_of_n"}, proc.stderr[-2000:]
    assert json.loads(proc.stdout)["iterations_done"] == 2
    loaded, _ = loaded_by(*run, "-s", "openevolve", store=store)
    assert loaded == {"openevolve"}


@pytest.mark.slow
def test_a_composition_naming_another_packages_block_loads_that_package(tmp_path: Path) -> None:
    composition = tmp_path / "mixed.yaml"
    composition.write_text(
        "blocks:\n  population: map_elites_islands\n"
        "  selection_policy: three_tier_explore_exploit\n  prompt: default\n"
        "  proposer: full_rewrite\n  evaluator: task\n  memory: none\n"
    )
    run = ("run", "-t", "function_minimization", "-i", "1", "--sandbox", "local", "--json")
    loaded, proc = loaded_by(*run, "-s", str(composition), store=tmp_path / "s.sqlite")
    assert loaded == {"openevolve"}
    assert json.loads(proc.stdout)["iterations_done"] == 1


def test_an_unknown_block_lists_every_valid_block_of_its_slot(tmp_path: Path) -> None:
    composition = tmp_path / "bad.yaml"
    composition.write_text(
        "blocks:\n  population: keep_all\n  selection_policy: top_k\n  prompt: default\n"
        "  proposer: diff\n  evaluator: task\n  memory: no_such_memory\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", "-s", str(composition), "-t",
         "function_minimization", "--sandbox", "local"],
        cwd=ROOT, env=cli_env(tmp_path / "s.sqlite"), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode != 0
    assert "unknown memory block 'no_such_memory'" in proc.stderr
    # The blocks of scaffold packages the composition did not name are listed too.
    assert "adaevolve_paradigms" in proc.stderr and "strategy_history" in proc.stderr


def test_a_run_never_imports_the_openai_sdk(tmp_path: Path) -> None:
    """≈0.4 s of imports a run does not need: two HTTP calls go through ``httpx``."""
    run = ("run", "-t", "function_minimization", "-s", "topk", "-i", "1", "--offline")
    last, proc = probe(*run, "--sandbox", "local", "--json", store=tmp_path / "s.sqlite")
    assert json.loads(proc.stdout)["iterations_done"] == 1  # it did talk to the offline model
    assert last["sdk"] == [], proc.stderr[-2000:]


def test_the_http_stack_loads_with_the_first_llm_client_not_before() -> None:
    """A run asks for its first container before it makes its LLM client; what it imports up
    to then (``httpx`` and the transport are ≈35 ms) delays that request, so they load with
    the client (``Runtime.llm``), while the engine starts the container."""
    code = (
        "import sys, harness.cli.runs, harness.runs, harness.runtime, harness.evaluation.driver,"
        " harness.sandbox.docker_backend;"
        " print(sorted(m for m in ('httpx', 'httpcore', 'harness.llm._http',"
        " 'harness.llm.client') if m in sys.modules))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "[]"
