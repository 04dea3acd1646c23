"""Reference semantics of the greedy policies, driven through the real controller loop."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

from harness.components.memory import NullMemory
from harness.components.population import InMemoryPopulation
from harness.components.prompt import DefaultPromptBuilder
from harness.components.selection import (
    BestOfNAttemptsPolicy,
    BestOfNConfig,
    BestOfNPolicy,
    TopKConfig,
    TopKPolicy,
    combined_score_key,
    global_best,
)
from harness.core.config import GeneralConfig
from harness.core.controller import Controller
from harness.core.records import Program
from harness.core.scaffold import Scaffold
from harness.core.scoring import get_score
from harness.core.store import RunRecord
from harness.store.sqlite import SQLiteStore
from tests.fakes import EchoModel, ScoreEvaluator, ScoreProposer, SimpleMeter, select_now


def run_loop(tmp_path: Path, policy, evaluator, proposer, iterations: int) -> Controller:
    scaffold = Scaffold(
        name="t",
        population=InMemoryPopulation(),
        selection=policy,
        prompt_builder=DefaultPromptBuilder(),
        proposer=proposer,
        evaluator=evaluator,
        memory=NullMemory(),
    )
    store = SQLiteStore(tmp_path / "s.sqlite")
    run = RunRecord(
        id="r1",
        scaffold="t",
        task="t",
        task_path="",
        config={},
        seed=0,
        max_iterations=iterations,
    )
    store.create_run(run)
    ctl = Controller(
        scaffold,
        store=store,
        run=run,
        model=EchoModel(meter=(meter := SimpleMeter())),
        meter=meter,
        general=GeneralConfig(max_iterations=iterations),
        seed_code="score = 0.5\n",
    )
    asyncio.run(ctl.run_to_end())
    return ctl


def test_best_of_n_parent_serves_seven_calls_when_two_iterations_fail(tmp_path: Path) -> None:
    proposer = ScoreProposer()
    policy = BestOfNPolicy(random.Random(0), BestOfNConfig(best_of_n=5, num_inspirations=2))
    run_loop(tmp_path, policy, ScoreEvaluator(fail=lambda it: it in (3, 4)), proposer, 10)
    assert proposer.parents[:8] == ["p0"] * 7 + ["p1"]
    assert proposer.parents.count("p0") == 7


def test_best_of_n_attempts_parent_serves_exactly_n_calls(tmp_path: Path) -> None:
    proposer = ScoreProposer()
    policy = BestOfNAttemptsPolicy(random.Random(0), BestOfNConfig(best_of_n=5, num_inspirations=2))
    run_loop(tmp_path, policy, ScoreEvaluator(fail=lambda it: it in (3, 4)), proposer, 10)
    assert proposer.parents.count("p0") == 5
    assert proposer.parents[5] != "p0"


def test_failed_iterations_add_nothing(tmp_path: Path) -> None:
    proposer = ScoreProposer()
    policy = BestOfNPolicy(random.Random(0), BestOfNConfig())
    failing = ScoreEvaluator(fail=lambda it: it > 0 and it % 2 == 0)  # the seed evaluates
    ctl = run_loop(tmp_path, policy, failing, proposer, 6)
    assert (
        sorted(ctl.scaffold.population.get(pid) is not None for pid in ("p2", "p4", "p6"))
        == [False] * 3
    )
    assert len(ctl.scaffold.population) == 1 + 3


def test_topk_with_one_program_uses_it_as_parent_and_sole_inspiration() -> None:
    pop = InMemoryPopulation()
    seed = Program(id="p0", code="x", iteration=0, metrics={"combined_score": 0.1}, score=0.1)
    pop.add(seed)
    selection = select_now(TopKPolicy(random.Random(0), TopKConfig(num_inspirations=4)), pop, 1)
    assert selection.parent is seed
    assert [p.id for p in selection.inspirations] == ["p0"]


def test_topk_ties_keep_insertion_order() -> None:
    pop = InMemoryPopulation()
    for i, s in enumerate([0.5, 0.9, 0.9, 0.5, 0.7]):
        pop.add(Program(id=f"p{i}", code="", iteration=i, metrics={}, score=s))
    selection = select_now(TopKPolicy(random.Random(0), TopKConfig(num_inspirations=3)), pop, 5)
    assert selection.parent.id == "p1"
    assert [p.id for p in selection.inspirations] == ["p2", "p4", "p0"]


def test_best_of_n_picks_parent_by_combined_score_not_mean() -> None:
    pop = InMemoryPopulation()
    pop.add(Program(id="a", code="", iteration=0, metrics={"x": 100.0}, score=100.0))
    pop.add(Program(id="b", code="", iteration=1, metrics={"combined_score": 0.2}, score=0.2))
    selection = select_now(BestOfNPolicy(random.Random(0), BestOfNConfig()), pop, 2)
    assert selection.parent.id == "b"  # "a" has no combined_score: -inf for this choice


def test_global_best_matches_the_reference_argmax_on_mixed_metrics() -> None:
    rng = random.Random(3)
    for trial in range(50):
        pop = InMemoryPopulation()
        for i in range(rng.randint(1, 60)):
            kind = rng.random()
            if kind < 0.2:
                metrics = {"x": rng.random()}  # no combined_score: -inf for this choice
            elif kind < 0.3:
                metrics = {"combined_score": "n/a", "x": 1.0}
            else:
                metrics = {"combined_score": round(rng.random(), 1)}  # many ties
            pop.add(
                Program(id=f"p{i}", code="", iteration=i, metrics=metrics, score=get_score(metrics))
            )
        members = pop.programs()
        expected = members[0]
        for p in members[1:]:
            if combined_score_key(p) > combined_score_key(expected):
                expected = p
        assert global_best(pop).id == expected.id, trial


def test_a_bool_combined_score_is_a_best_of_n_parent_key_as_in_the_reference() -> None:
    """``safe_score`` counts ``True`` as 1.0 (``isinstance(True, (int, float))``)."""
    from harness.components.selection import combined_score_key

    flagged = Program(id="t", code="", iteration=1, metrics={"combined_score": True}, score=1.0)
    text = Program(id="s", code="", iteration=2, metrics={"combined_score": "n/a"}, score=0.0)
    assert combined_score_key(flagged) == 1.0 and combined_score_key(text) == float("-inf")
    pop = InMemoryPopulation()
    seed = Program(id="p0", code="", iteration=0, metrics={"combined_score": 0.5}, score=0.5)
    for p in (seed, flagged, text):
        pop.add(p)
    selection = select_now(BestOfNPolicy(random.Random(0), BestOfNConfig()), pop, 3)
    assert selection.parent is flagged
