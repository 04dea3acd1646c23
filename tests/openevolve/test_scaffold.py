"""The ``openevolve`` composition through the real controller and a real SQLite store (offline
model, regex scorer; Docker runs are in ``test_docker_runs.py``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from harness.core.blocks import check
from harness.core.errors import ConfigError
from harness.core.prompt import PromptContext
from harness.core.records import LLMCall, Prompt
from harness.core.registry import block_catalog, list_scaffolds, load_config
from harness.diffs import find_fences
from scaffolds.openevolve.population import MapElitesIslandsPopulation
from scaffolds.openevolve.prompt import OpenEvolvePromptBuilder
from tests.conformance.runner import Built, build, run
from tests.evox.fakes import OfflineChat
from tests.fakes import select_now

ITERATIONS = 30


class NoDiffEvery:
    """The offline model, but every ``every``-th call answers prose without a diff block."""

    def __init__(self, inner: OfflineChat, every: int) -> None:
        self.inner = inner
        self.every = every
        self.calls = 0

    async def generate(self, prompt: Prompt, *, purpose: str, seed: int) -> LLMCall:
        self.calls += 1
        if self.calls % self.every == 0:
            return LLMCall(model="nodiff", text="I would restructure the loop, but no edit here.")
        return await self.inner.generate(prompt, purpose=purpose, seed=seed)

    def state_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "inner": self.inner.state_dict()}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.calls = state["calls"]
        self.inner.load_state_dict(state["inner"])


def events(built: Built, kind: str) -> list[tuple[int, dict[str, Any]]]:
    return [(e.iteration, dict(e.payload)) for e in built.store.events("conf") if e.kind == kind]


def openevolve_run(tmp_path: Path, *overrides: str, every: int = 0) -> Built:
    built = build(
        "openevolve",
        tmp_path / "oe.sqlite",
        iterations=ITERATIONS,
        overrides=["population.num_islands=5", "population.migration_interval=3", *overrides],
    )
    if every:
        built.controller.model = NoDiffEvery(OfflineChat(seed=0), every)
    run(built)
    return built


def test_openevolve_is_listed_with_the_card_composition() -> None:
    assert "openevolve" in list_scaffolds()
    spec, config = load_config("openevolve")
    assert config.blocks.named() == {
        "population": "map_elites_islands",
        "selection_policy": "three_tier_explore_exploit",
        "prompt": "openevolve_template",
        "proposer": "diff",
        "evaluator": "task",
        "memory": "none",
    }
    assert spec.summary  # the README's quoted line
    sel = config.selection_policy.model_dump()
    assert (sel["exploration_ratio"], sel["exploitation_ratio"]) == (0.2, 0.7)
    assert (sel["num_inspirations"], sel["num_diverse"]) == (3, 2)
    pop = config.population.model_dump()
    assert (pop["num_islands"], pop["migration_interval"], pop["migration_rate"]) == (5, 50, 0.1)
    assert config.proposer.model_dump()["allow_full_rewrite"] is False


def test_every_selection_records_island_tier_parent_and_inspirations(tmp_path: Path) -> None:
    built = openevolve_run(tmp_path)
    selects = events(built, "select")
    assert len(selects) == ITERATIONS
    for iteration, payload in selects:
        info = payload["info"]
        assert info["island"] == (iteration - 1) % 5 == payload["tags"]["island"]
        assert info["tier"] in ("exploration", "exploitation", "weighted", "random")
        assert payload["parent"] and isinstance(payload["inspirations"], list)
        assert len(info["inspiration_kinds"]) == len(payload["inspirations"])
    # The child lands on the island it was sampled from.
    for p in built.store.programs("conf"):
        if p.iteration > 0 and "copy_of" not in p.metadata:
            assert p.metadata["island"] == (p.iteration - 1) % 5


def test_placements_and_migrations_at_the_right_generations(tmp_path: Path) -> None:
    built = openevolve_run(tmp_path)
    placed = {payload["program"] for _, payload in events(built, "placement")}
    stored = {p.id for p in built.store.programs("conf")}
    assert placed == stored  # every program, seed and migrants included, was placed
    generations = [0] * 5
    last = 0
    expected = []
    admitted = {it for it, payload in events(built, "admit") if it > 0 and payload["admitted"]}
    for iteration in range(1, ITERATIONS + 1):
        if iteration in admitted:
            generations[(iteration - 1) % 5] += 1
            if max(generations) - last >= 3:
                last = max(generations)
                expected.append((iteration, last))
    migrations = events(built, "migration")
    assert [(it, p["generation"]) for it, p in migrations] == expected
    assert expected, "the run should migrate"
    copies = [m for _, p in migrations for m in p["moves"] if "copy" in m]
    assert copies
    programs = {p.id: p for p in built.store.programs("conf")}
    for move in copies:
        copy = programs[move["copy"]]
        assert copy.metadata["migrant"] is True and copy.metadata["island"] == move["to"]
        assert copy.parent_id == move["program"] and copy.code == programs[move["program"]].code
        assert not programs[move["program"]].metadata.get("migrant")  # never re-migrated


def test_a_response_without_a_diff_is_a_recorded_no_diff_step(tmp_path: Path) -> None:
    built = openevolve_run(tmp_path, every=4)
    failed = {it for it, _ in events(built, "iteration_failed")}
    rejected = {
        it
        for it, p in events(built, "attempt")
        if p["outcome"] == "proposal_rejected" and "No SEARCH/REPLACE" in p["error"]
    }
    assert {4, 8, 12} <= rejected <= failed
    children = {p.iteration for p in built.store.programs("conf") if "copy_of" not in p.metadata}
    assert not children & rejected  # no full-rewrite fallback: nothing was made of the answer
    population = built.scaffold.population
    assert isinstance(population, MapElitesIslandsPopulation)
    # A no-diff step does not advance its island's generation.
    per_island = Counter((it - 1) % 5 for it in range(1, ITERATIONS + 1) if it not in failed)
    assert population.generations == [per_island[i] for i in range(5)]


def test_prompt_has_the_openevolve_sections_and_the_parent_last(tmp_path: Path) -> None:
    built = openevolve_run(tmp_path)
    scaffold = built.scaffold
    selection = select_now(scaffold.selection, scaffold.population, ITERATIONS + 1)
    assert selection.parent is not None
    context = PromptContext(iteration=ITERATIONS + 1, population=scaffold.population)
    prompt = scaffold.prompt_builder.build(selection, context)
    assert prompt == scaffold.prompt_builder.build(selection, context)  # pure
    user = prompt.user
    order = [
        "# Current Program Information",
        "- Fitness:",
        "- Feature coordinates:",
        "- Focus areas:",
        "# Program Evolution History",
        "## Previous Attempts",
        "## Top Performing Programs",
        "# Current Program\n",
        "# Task",
        "<<<<<<< SEARCH",
    ]
    positions = [user.index(marker) for marker in order]
    assert positions == sorted(positions)
    assert find_fences(user)[-1].body == selection.parent.code.rstrip("\n")
    assert "complexity, diversity" in user
    assert prompt.kind == "diff"


def test_parallel_iterations_keep_children_on_their_sampling_island(tmp_path: Path) -> None:
    built = openevolve_run(tmp_path, "general.max_parallel_iterations=4")
    summary = built.controller.summary("completed")
    assert summary.iterations_done == ITERATIONS
    for p in built.store.programs("conf"):
        if p.iteration > 0 and "copy_of" not in p.metadata:
            assert p.metadata["island"] == (p.iteration - 1) % 5
    population = built.scaffold.population
    assert isinstance(population, MapElitesIslandsPopulation)
    for island, members in enumerate(population.islands):
        assert all(population.island_of(pid) == island for pid in members)
    assert events(built, "migration")


def test_the_prompt_takes_its_program_counts_from_the_selection_policy_section(
    tmp_path: Path,
) -> None:
    built = build(
        "openevolve",
        tmp_path / "oe.sqlite",
        iterations=1,
        overrides=["selection_policy.num_inspirations=4", "selection_policy.num_diverse=1"],
    )
    prompt = built.scaffold.prompt_builder
    assert isinstance(prompt, OpenEvolvePromptBuilder)
    assert (prompt.num_top, prompt.num_diverse) == (4, 1)


def test_the_prompt_refuses_a_selection_policy_without_those_counts() -> None:
    spec, config = load_config("openevolve")
    swapped = config.blocks.model_copy(update={"selection_policy": "top_k"})
    with pytest.raises(ConfigError) as refused:
        check(swapped, block_catalog())
    message = str(refused.value)
    assert "openevolve_template" in message and "top_k" in message and "three_tier" in message
