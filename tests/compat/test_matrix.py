"""The compat matrix (``tests/compat/matrix.py``): the peers' own task folders, at pinned commits
with their licences, run offline for three iterations with the scaffold their authors meant, in
Docker, and complete; the folders that need what Galapagos cannot give stop before any LLM call
with their reason; ``docs/compat.md`` is the manifest, rendered, and current."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from harness.store.sqlite import SQLiteStore
from tests.compat.matrix import COPIED, ITERATIONS, PEERS, cells, manifest, run_cells
from tests.compat.render import DOC, render


def test_docs_compat_md_is_the_manifest_rendered() -> None:
    assert DOC.read_text() == render(), (
        "docs/compat.md is stale: python -m tests.compat.render --write"
    )


def test_every_listed_folder_kept_is_test_data_with_its_licence() -> None:
    data = manifest()
    for repo, info in data["repositories"].items():
        licence = PEERS / repo / info["licence"].split()[0]
        assert "Apache License" in licence.read_text(), licence
        assert len(info["commit"]) == 40
    for cell in cells():
        kept = cell.folder.is_dir()
        assert kept == (cell.status in COPIED), f"{cell.name}: status {cell.status}"
        if cell.status == "not_run":
            assert cell.reason, f"{cell.name}: a folder not run says why"
    # Every folder kept is listed (no stray test data).
    listed = {cell.folder.resolve() for cell in cells()}
    for config in PEERS.rglob("config*.y*ml"):
        folder = config.parent
        if folder.name == "evaluator":
            continue
        assert folder.resolve() in listed, f"{folder} is not in the manifest"


@pytest.mark.docker
@pytest.mark.slow
def test_the_runnable_folders_complete_offline_with_their_authors_scaffold(
    tmp_path: Path,
) -> None:
    chosen = cells(["run"])
    assert len(chosen) >= 15
    store = SQLiteStore(tmp_path / "matrix.sqlite")
    outcomes = asyncio.run(run_cells(chosen, store, parallel=2))
    broken = [
        f"{o.cell.name}: {o.status}, {o.iterations} iterations, {o.error[:300]}"
        for o in outcomes
        if o.status != "completed" or o.iterations != ITERATIONS
    ]
    assert not broken, "\n".join(broken)
    # Each ran its own evaluator: the seed was scored (a number) and evaluations happened.
    assert all(o.seed_score is not None and o.evaluations >= 1 for o in outcomes)


@pytest.mark.docker
@pytest.mark.slow
def test_the_folders_needing_more_stop_before_any_llm_call(tmp_path: Path) -> None:
    chosen = cells(["refused"])
    assert chosen
    store = SQLiteStore(tmp_path / "refused.sqlite")
    outcomes = asyncio.run(run_cells(chosen, store, parallel=2))
    for outcome in outcomes:
        name = outcome.cell.name
        assert outcome.status in ("failed", "error"), f"{name} ran: {outcome.status}"
        assert re.search(outcome.cell.expect, outcome.error), f"{name}: {outcome.error}"
        assert "\n" not in outcome.error
        # No LLM call: it stopped at its preflight or at its seed's evaluation.
        assert outcome.iterations == 0 and outcome.llm_calls == 0, name
        assert outcome.evaluations <= 1, name


@pytest.mark.docker
@pytest.mark.slow
def test_a_folder_needing_an_on_demand_image_runs_in_it_or_names_it(tmp_path: Path) -> None:
    """OpenEvolve's Rust folder: with ``rust-eval`` built it completes (every evaluation fails to
    build, crates.io being out of reach); without it the run stops at once naming the command
    that builds it."""
    import docker

    from harness.sandbox.images import image_present, image_tag

    chosen = cells(["image"])
    assert chosen
    client = docker.from_env()
    store = SQLiteStore(tmp_path / "image.sqlite")
    outcomes = asyncio.run(run_cells(chosen, store, parallel=1))
    for outcome in outcomes:
        cell = outcome.cell
        if image_present(client, image_tag(cell.image)):
            assert outcome.status == "completed", f"{cell.name}: {outcome.error}"
            assert outcome.iterations == ITERATIONS
        else:
            # Refused before any LLM call: as a failed run, or before the run starts at all.
            assert outcome.status in ("failed", "error") and outcome.llm_calls == 0, cell.name
            assert f"galapagos sandbox build {cell.image}" in outcome.error, outcome.error
