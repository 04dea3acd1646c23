"""The iteration contract blocks rely on: hooks (iteration 0 too), the error rule, programs
created by blocks, selection tags at admission, and the loop's control-flow switches."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest

from harness.components.memory import NullMemory
from harness.components.population import InMemoryPopulation
from harness.components.prompt import DefaultPromptBuilder
from harness.components.selection import TopKConfig, TopKPolicy
from harness.core.block import Step
from harness.core.config import GeneralConfig, LoopConfig
from harness.core.controller import Controller
from harness.core.errors import HarnessError, LLMError, StoreError
from harness.core.memory import BaseMemory
from harness.core.population import BasePopulation, PopulationView
from harness.core.records import EvalResult, IterationOutcome, Program, Prompt, Selection
from harness.core.scaffold import Scaffold
from harness.core.selection import BaseSelectionPolicy
from harness.core.store import RunRecord
from harness.store.sqlite import SQLiteStore
from tests.fakes import EchoModel, ScoreEvaluator, ScoreProposer, SimpleMeter


class Recorder(BaseMemory):
    """Records the hooks it sees; optionally asks the LLM (and may be told to fail)."""

    def __init__(self, *, ask_llm: bool = False) -> None:
        self.seen: list[tuple[str, int, Any]] = []
        self.ask_llm = ask_llm
        self.observed: list[int] = []

    async def start_iteration(self, step: Step) -> None:
        self.seen.append(("start", step.iteration, None))
        if self.ask_llm:
            call = await step.llm.generate(Prompt(system="", user="guide?"), purpose="guide")
            step.event("guide", text=call.text)

    async def end_iteration(self, step: Step, outcome: IterationOutcome) -> None:
        child = outcome.child.id if outcome.child else None
        self.seen.append(("end", step.iteration, child))

    def observe(self, outcome: IterationOutcome) -> None:
        self.observed.append(outcome.iteration)


class FailingModel(EchoModel):
    """Fails every call whose purpose is ``guide``."""

    async def generate(self, prompt: Prompt, *, purpose: str, seed: int):  # type: ignore[override]
        if purpose == "guide":
            raise LLMError("guide endpoint down")
        return await super().generate(prompt, purpose=purpose, seed=seed)


class Cloner(InMemoryPopulation):
    """Copies the best member at the end of every iteration (a migration stand-in)."""

    def __init__(self, *, reuse_id: str | None = None) -> None:
        super().__init__()
        self.reuse_id = reuse_id
        self.copies: list[Program] = []

    async def end_iteration(self, step: Step, outcome: IterationOutcome) -> None:
        best = self.best()
        if best is None:
            return
        copy = step.new_program(best, metadata={"island": 1, "migrant": True})
        self.copies.append(copy)
        self.add(copy)


class Tagger(TopKPolicy):
    async def select(self, population: PopulationView, step: Step) -> Selection:
        chosen = await super().select(population, step)
        return Selection(
            parent=chosen.parent,
            inspirations=chosen.inspirations,
            info=dict(chosen.info),
            tags={"island": step.iteration % 3, "mode": "explore"},
        )


class Counting(BaseSelectionPolicy):
    def __init__(self) -> None:
        super().__init__(random.Random(0))
        self.calls = 0

    async def select(self, population: PopulationView, step: Step) -> Selection:
        self.calls += 1
        await asyncio.sleep(0)  # a selection may await (a strategy in a container answers it)
        return Selection(parent=population.best())


def make(
    tmp_path: Path,
    *,
    population: BasePopulation | None = None,
    selection: BaseSelectionPolicy | None = None,
    memory: BaseMemory | None = None,
    model: EchoModel | None = None,
    evaluator: Any = None,
    loop: LoopConfig | None = None,
    iterations: int = 3,
    retries: int = 1,
) -> tuple[Controller, SQLiteStore]:
    scaffold = Scaffold(
        name="t",
        population=InMemoryPopulation() if population is None else population,
        selection=selection or TopKPolicy(random.Random(0), TopKConfig(num_inspirations=1)),
        prompt_builder=DefaultPromptBuilder(),
        proposer=ScoreProposer(),
        evaluator=evaluator or ScoreEvaluator(),
        memory=memory or NullMemory(),
        loop=loop or LoopConfig(),
    )
    store = SQLiteStore(tmp_path / "s.sqlite")
    run = RunRecord("r", "t", "t", "", {}, 0, iterations)
    store.create_run(run)
    meter = SimpleMeter()
    ctl = Controller(
        scaffold,
        store=store,
        run=run,
        model=model or EchoModel(meter=meter),
        meter=meter,
        general=GeneralConfig(max_iterations=iterations, inner_retry_times=retries),
        seed_code="score = 0.5\n",
    )
    return ctl, store


def test_hooks_and_observe_run_for_the_seed_iteration_too(tmp_path: Path) -> None:
    memory = Recorder()
    ctl, _ = make(tmp_path, memory=memory, iterations=2)
    asyncio.run(ctl.run_to_end())
    assert memory.seen == [
        ("start", 0, None),
        ("end", 0, "p0"),
        ("start", 1, None),
        ("end", 1, "p1"),
        ("start", 2, None),
        ("end", 2, "p2"),
    ]
    assert memory.observed == [0, 1, 2]


def test_an_llm_error_in_a_hook_is_an_event_and_the_run_goes_on(tmp_path: Path) -> None:
    memory = Recorder(ask_llm=True)
    meter = SimpleMeter()
    ctl, store = make(tmp_path, memory=memory, model=FailingModel(meter=meter), iterations=2)
    summary = asyncio.run(ctl.run_to_end())
    assert summary.status == "completed"
    skipped = store.events("r", ["hook_skipped"])
    assert [e.iteration for e in skipped] == [0, 1, 2]
    assert skipped[0].payload["slot"] == "memory"
    assert skipped[0].payload["hook"] == "start_iteration"
    assert "guide endpoint down" in skipped[0].payload["error"]
    # The failed guide calls are recorded like every call; the proposals still ran.
    purposes = [c["purpose"] for c in store.llm_calls("r")]
    assert purposes.count("guide") == 3 and purposes.count("propose") == 2
    assert [p.id for p in store.programs("r") if p.iteration > 0] == ["p1", "p2"]


def test_blocks_create_stored_programs_with_controller_ids(tmp_path: Path) -> None:
    population = Cloner()
    ctl, store = make(tmp_path, population=population, iterations=2)
    asyncio.run(ctl.run_to_end())
    ids = [p.id for p in store.programs("r")]
    assert ids == ["p0", "p0.1", "p1", "p1.1", "p2", "p2.1"]
    copy = next(p for p in store.programs("r") if p.id == "p1.1")
    assert copy.metadata["copy_of"] == "p1" and copy.metadata["migrant"] is True
    assert copy.parent_id == "p1" and copy.iteration == 1
    assert copy.code == store.programs("r")[2].code and copy.score == pytest.approx(0.51)
    # A copy of a copy still names the original.
    later = [c for c in population.copies if c.id == "p2.1"][0]
    assert later.metadata["copy_of"] == "p2"


def test_a_copy_cannot_change_code_or_score(tmp_path: Path) -> None:
    class Forger(InMemoryPopulation):
        async def end_iteration(self, step: Step, outcome: IterationOutcome) -> None:
            step.new_program(self.programs()[0], score=99.0)

    ctl, _ = make(tmp_path, population=Forger(), iterations=1)
    with pytest.raises(HarnessError, match="cannot set score"):
        asyncio.run(ctl.run_to_end())


def test_a_colliding_program_id_is_an_error_not_an_overwrite(tmp_path: Path) -> None:
    ctl, store = make(tmp_path, iterations=1)
    asyncio.run(ctl.run_to_end())
    stored = store.programs("r")[0]
    from harness.core.store import IterationCommit

    with pytest.raises(StoreError, match="would overwrite a stored program"):
        store.commit_iteration(
            IterationCommit("r", 5, "ok", programs=[Program(**{**stored.to_dict(), "code": "x"})])
        )
    assert store.programs("r")[0].code == stored.code


def test_selection_tags_travel_with_the_child_to_admission(tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []

    class Routing(InMemoryPopulation):
        def add(self, program: Program) -> bool:
            seen.append(dict(program.metadata))
            return super().add(program)

    ctl, store = make(
        tmp_path,
        population=Routing(),
        selection=Tagger(random.Random(0), TopKConfig(num_inspirations=1)),
        iterations=3,
    )
    asyncio.run(ctl.run_to_end())
    assert [m.get("island") for m in seen] == [None, 1, 2, 0]
    assert all(m.get("mode") == "explore" for m in seen[1:])
    selects = store.events("r", ["select"])
    assert selects[0].payload["tags"] == {"island": 1, "mode": "explore"}


def test_llm_errors_end_the_iteration_unless_the_loop_retries_them(tmp_path: Path) -> None:
    class Flaky(EchoModel):
        async def generate(self, prompt: Prompt, *, purpose: str, seed: int):  # type: ignore[override]
            if len(self.calls) % 2 == 0:
                self.calls.append([])
                raise LLMError("flaky")
            return await super().generate(prompt, purpose=purpose, seed=seed)

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    ends, store_a = make(tmp_path / "a", model=Flaky(), retries=2, iterations=1)
    asyncio.run(ends.run_to_end())
    # The first attempt's error ended the iteration (no attempt 1).  Having got no proposal,
    # the run's last iteration is not done: the run stops interrupted, for a resume to redo it.
    attempts = [
        (e.payload["attempt"], e.payload["outcome"]) for e in store_a.events("r", ["attempt"])
    ]
    assert attempts == [(0, "llm_error")]
    assert [p.id for p in store_a.programs("r")] == ["p0"]
    assert store_a.get_run("r").status == "interrupted"
    retries, store_b = make(
        tmp_path / "b",
        model=Flaky(),
        retries=2,
        iterations=1,
        loop=LoopConfig(retry_llm_errors=True),
    )
    asyncio.run(retries.run_to_end())
    assert [p.id for p in store_b.programs("r")] == ["p0", "p1"]  # the second attempt ran
    outcomes = [e.payload["outcome"] for e in store_b.events("r", ["attempt"])]
    assert outcomes == ["llm_error", "ok"]


def test_failed_evaluations_are_admitted_only_when_the_loop_says_so(tmp_path: Path) -> None:
    failing = ScoreEvaluator(fail=lambda it: it == 1)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    rejects, store_a = make(tmp_path / "a", evaluator=failing, iterations=1)
    asyncio.run(rejects.run_to_end())
    assert [p.id for p in store_a.programs("r")] == ["p0"]
    admits, store_b = make(
        tmp_path / "b",
        evaluator=ScoreEvaluator(fail=lambda it: it == 1),
        iterations=1,
        loop=LoopConfig(admit_failed_evaluations=True),
    )
    asyncio.run(admits.run_to_end())
    child = store_b.programs("r")[1]
    assert child.id == "p1" and child.metrics["validity"] == 0.0 and child.score == 0.0
    event = store_b.events("r", ["attempt"])[0].payload
    assert event["failed"] is True and event["status"] == "invalid"


def test_select_runs_per_attempt_only_when_the_loop_resamples(tmp_path: Path) -> None:
    always_fail = ScoreEvaluator(fail=lambda it: it >= 1)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    once = Counting()
    ctl, _ = make(tmp_path / "a", selection=once, evaluator=always_fail, retries=3, iterations=1)
    asyncio.run(ctl.run_to_end())
    each = Counting()
    ctl, _ = make(
        tmp_path / "b",
        selection=each,
        evaluator=ScoreEvaluator(fail=lambda it: it >= 1),
        retries=3,
        iterations=1,
        loop=LoopConfig(resample_each_attempt=True),
    )
    asyncio.run(ctl.run_to_end())
    assert (once.calls, each.calls) == (1, 3)


def test_the_best_program_ranks_as_the_reference_does(tmp_path: Path) -> None:
    """A program with metrics beats one without, whatever the scores (``_is_better``)."""

    class SeedWithoutMetrics(ScoreEvaluator):
        async def evaluate(self, code: str, *, program_id: str, iteration: int) -> EvalResult:
            if iteration == 0:
                return EvalResult(status="ok", metrics={})
            return EvalResult(status="ok", metrics={"combined_score": -1.0, "validity": 1.0})

    ctl, store = make(tmp_path, evaluator=SeedWithoutMetrics(), iterations=1)
    summary = asyncio.run(ctl.run_to_end())
    assert summary.best_program_id == "p1" and summary.best_score == -1.0
