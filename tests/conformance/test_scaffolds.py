"""Conformance of every shipped scaffold (parametrised by ``list_scaffolds()``; no Docker).

- The composition builds from named blocks, and each block honours its base contract.
- Stopping at iteration k and resuming in a fresh process-like object gives the same lineage,
  scores, events and final block state as an uninterrupted run.
- That comparison is not vacuous: for every block whose checkpointed state differs from a
  freshly built one, disabling its ``load_state_dict`` makes the resumed run differ.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from harness.core.block import Block
from harness.core.config import SLOTS
from harness.core.controller import Progress
from harness.core.evaluator import BaseEvaluator
from harness.core.memory import BaseMemory
from harness.core.population import BasePopulation
from harness.core.prompt import BasePromptBuilder
from harness.core.proposer import BaseProposer
from harness.core.registry import block_catalog, get_spec, list_scaffolds
from harness.core.selection import BaseSelectionPolicy
from tests.conformance.runner import build, lineage, run

ITERATIONS = 10
STOP_AT = 4
#: Events only a resumed run records (it says it rebuilt what lived outside the checkpoint).
RESUME_EVENTS = {"strategy_revived"}

BASES = {
    "population": BasePopulation,
    "selection_policy": BaseSelectionPolicy,
    "prompt": BasePromptBuilder,
    "proposer": BaseProposer,
    "evaluator": BaseEvaluator,
    "memory": BaseMemory,
}
STATE_KEYS = {"population": "population", "selection_policy": "selection", "memory": "memory"}
#: The scaffolds for the run-twice tests; EvoX's (strategies in subprocesses, seconds each) are
#: marked slow, out of the fast tier.
SLOW = pytest.mark.slow
RUN_TWICE = [pytest.param(n, marks=SLOW) if n == "evox" else n for n in list_scaffolds()]


def _normal(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True, default=str))


def _checkpoint(state: dict[str, Any]) -> dict[str, Any]:
    """A checkpoint without the test double's own call counter (not run state)."""
    state = _normal(state)
    state["controller"].pop("model", None)
    return state


def uninterrupted(name: str, tmp: Path) -> tuple[list[dict[str, Any]], dict[str, Any], list]:
    built = build(name, tmp / "full.sqlite", iterations=ITERATIONS)
    run(built)
    state = built.store.checkpoint("conf")
    assert state is not None
    events = [(e.iteration, e.kind) for e in built.store.events("conf")]
    return lineage(built.store), _checkpoint(state[1]), events


def interrupted_then_resumed(
    name: str, tmp: Path, *, disable: str | None = None
) -> tuple[list[dict[str, Any]], dict[str, Any], list, dict[str, Any]]:
    path = tmp / f"split-{disable}.sqlite"
    first = build(name, path, iterations=ITERATIONS)

    def stop(progress: Progress) -> None:
        if progress.iterations_done >= STOP_AT:
            first.controller.request_stop()

    first.controller.on_progress = stop
    run(first)
    assert first.store.get_run("conf").status == "interrupted"
    checkpoint = first.store.checkpoint("conf")
    assert checkpoint is not None and checkpoint[0] == STOP_AT
    second = build(name, path, iterations=ITERATIONS, create=False)
    if disable is not None:
        block = _block(second.scaffold, disable)
        block.load_state_dict = lambda *args, **kwargs: None  # type: ignore[method-assign]
    second.controller.restore()
    restored = _normal(second.scaffold.state_dict())
    run(second)
    state = second.store.checkpoint("conf")
    assert state is not None
    events = [
        (e.iteration, e.kind) for e in second.store.events("conf") if e.kind not in RESUME_EVENTS
    ]
    return lineage(second.store), _checkpoint(state[1]), events, restored


def _block(scaffold: Any, slot: str) -> Any:
    return {
        "population": scaffold.population,
        "selection_policy": scaffold.selection,
        "memory": scaffold.memory,
        "prompt": scaffold.prompt_builder,
        "proposer": scaffold.proposer,
    }[slot]


@pytest.mark.parametrize("name", list_scaffolds())
def test_scaffold_is_a_composition_of_named_blocks(name: str) -> None:
    spec = get_spec(name)
    catalog = block_catalog()
    for slot, block in spec.composition.named().items():
        assert block in catalog[slot], f"{name}: {slot} block {block!r} is not registered"


@pytest.mark.parametrize("name", list_scaffolds())
def test_built_blocks_honour_their_slot_contracts(name: str, tmp_path: Path) -> None:
    built = build(name, tmp_path / "s.sqlite", iterations=2)
    scaffold = built.scaffold
    blocks = {slot: _block(scaffold, slot) for slot in STATE_KEYS} | {
        "prompt": scaffold.prompt_builder,
        "proposer": scaffold.proposer,
        "evaluator": scaffold.evaluator,
    }
    for slot in SLOTS:
        assert isinstance(blocks[slot], BASES[slot]), f"{name}: {slot} is {type(blocks[slot])}"
        if slot != "evaluator":
            assert isinstance(blocks[slot], Block)
    run(built)
    programs = built.store.programs("conf")
    assert [p.iteration for p in programs if "." not in p.id] == [0, 1, 2]
    population = scaffold.population
    members = population.programs()
    assert all(p.id in population for p in members)
    top = population.top(len(members))
    assert [p.score for p in top] == sorted((p.score for p in members), reverse=True)
    best = population.best()
    assert best is not None and best.score == max(p.score for p in members)
    # Iteration 0 ran the hooks and observe: its events are committed like any iteration's.
    assert any(e.iteration == 0 and e.kind == "seed" for e in built.store.events("conf"))


@pytest.mark.parametrize("name", RUN_TWICE)
def test_resume_after_a_stop_equals_an_uninterrupted_run(name: str, tmp_path: Path) -> None:
    full_lineage, full_state, full_events = uninterrupted(name, tmp_path)
    split_lineage, split_state, split_events, _ = interrupted_then_resumed(name, tmp_path)
    assert len(full_lineage) >= ITERATIONS  # the run produced children
    assert split_lineage == full_lineage
    assert split_state == full_state
    assert split_events == full_events


def _stateful_slots(name: str, tmp: Path) -> list[str]:
    """Slots whose checkpointed state at the stop differs from a freshly built block's."""
    probe = build(name, tmp / "probe.sqlite", iterations=ITERATIONS)

    def stop(progress: Progress) -> None:
        if progress.iterations_done >= STOP_AT:
            probe.controller.request_stop()

    probe.controller.on_progress = stop
    run(probe)
    checkpoint = probe.store.checkpoint("conf")
    assert checkpoint is not None
    fresh = build(name, tmp / "fresh.sqlite", iterations=ITERATIONS).scaffold.state_dict()
    saved = checkpoint[1]["scaffold"]
    return [
        slot
        for slot, key in STATE_KEYS.items()
        if _normal(saved.get(key)) != _normal(fresh.get(key))
    ]


@pytest.mark.parametrize("name", RUN_TWICE)
def test_every_stateful_block_must_be_restored(name: str, tmp_path: Path) -> None:
    """Disabling one block's ``load_state_dict`` breaks the resume comparison above."""
    slots = _stateful_slots(name, tmp_path)
    assert "population" in slots  # every scaffold keeps programs
    full_lineage, full_state, _ = uninterrupted(name, tmp_path)
    for slot in slots:
        lineage_, state, _, _ = interrupted_then_resumed(name, tmp_path, disable=slot)
        assert (lineage_, state) != (full_lineage, full_state), (
            f"{name}: resuming with {slot}.load_state_dict disabled went unnoticed"
        )


@SLOW
def test_an_evox_checkpoint_of_the_earlier_layout_resumes_the_same(tmp_path: Path) -> None:
    """Checkpoints written before the strategy chain was the sampler's state (it was under the
    memory's ``evox`` key) still resume to the uninterrupted run."""
    full_lineage, full_state, _ = uninterrupted("evox", tmp_path)
    path = tmp_path / "earlier.sqlite"
    first = build("evox", path, iterations=ITERATIONS)

    def stop(progress: Progress) -> None:
        if progress.iterations_done >= STOP_AT:
            first.controller.request_stop()

    first.controller.on_progress = stop
    run(first)
    checkpoint = first.store.checkpoint("conf")
    assert checkpoint is not None
    state = json.loads(json.dumps(checkpoint[1]))
    scaffold = state["scaffold"]
    chain = scaffold["selection"].pop("chain")
    assert chain["active"] is not None  # a rewritten strategy was deployed by the stop
    scaffold["memory"]["evox"].update(chain)
    with sqlite3.connect(path) as conn:
        # A store of that time holds the whole state in one row (no checkpoint deltas).
        conn.execute("UPDATE checkpoints SET state = ? WHERE run_id = 'conf'", (json.dumps(state),))
        conn.execute("DELETE FROM checkpoint_deltas WHERE run_id = 'conf'")
    second = build("evox", path, iterations=ITERATIONS, create=False)
    second.controller.restore()
    run(second)
    resumed = second.store.checkpoint("conf")
    assert resumed is not None
    assert lineage(second.store) == full_lineage
    assert _checkpoint(resumed[1]) == full_state
