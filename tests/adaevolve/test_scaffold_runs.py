"""The adaevolve scaffold through the real controller, in-process, with the offline model and
a regex scorer (tests/conformance/runner.py): seed-state initialisation, events, the paradigm
path and a failing guide model."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from harness.core.records import TaskInfo
from scaffolds.adaevolve.memory import ParadigmMemory, ParadigmMemoryConfig
from scaffolds.adaevolve.policy import AdaEvolvePolicy
from scaffolds.adaevolve.population import AdaEvolveArchipelago, ArchipelagoConfig
from tests.adaevolve.helpers import FakeStep, program
from tests.conformance.runner import build, run
from tests.evox.fakes import OfflineChat

#: Stagnation from the first full window: a paradigm request at every chance.
STAGNANT = [
    "memory.paradigm_window_size=3",
    "memory.paradigm_improvement_threshold=1.5",
    "selection_policy.use_dynamic_islands=false",
]


def test_iteration_one_samples_with_the_first_improvement_intensity_on_every_island(
    tmp_path: Path,
) -> None:
    built = build(
        "adaevolve", tmp_path / "s.sqlite", iterations=0, overrides=["population.num_islands=3"]
    )
    run(built)
    policy = built.scaffold.selection
    assert isinstance(policy, AdaEvolvePolicy)
    assert [policy.intensity(i) for i in range(3)] == pytest.approx([0.4159114211] * 3, abs=1e-10)
    assert policy.bandit.visits == [1, 0, 0]
    seeded = built.store.events("conf", kinds=["island_seeded"])
    assert [e.payload["island"] for e in seeded] == [1, 2]

    one = build("adaevolve", tmp_path / "one.sqlite", iterations=1)
    run(one)
    select = one.store.events("conf", kinds=["select"])[0]
    assert select.iteration == 1
    info = select.payload["info"]
    assert info["island"] == 0
    assert info["intensity"] == pytest.approx(0.4159114211, abs=1e-10)
    assert info["G"] == pytest.approx(0.1)
    assert info["mode"] in ("exploration", "exploitation", "balanced")


def test_every_selection_and_island_decision_is_an_event(tmp_path: Path) -> None:
    built = build("adaevolve", tmp_path / "s.sqlite", iterations=12)
    run(built)
    selects = built.store.events("conf", kinds=["select"])
    assert selects and all(
        {"island", "mode", "intensity", "G", "ucb"} <= set(e.payload["info"]) for e in selects
    )
    chosen = built.store.events("conf", kinds=["island_chosen"])
    assert [e.iteration for e in chosen] == list(range(1, 13))  # failed iterations included
    kinds = {e.kind for e in built.store.events("conf")}
    assert {"island_spawned", "migration", "paradigm_installed"} <= kinds


def test_paradigms_reach_the_prompt_and_replace_the_parent_with_the_best(tmp_path: Path) -> None:
    built = build("adaevolve", tmp_path / "s.sqlite", iterations=12, overrides=STAGNANT)
    chat = OfflineChat(seed=0)
    built.controller.model = chat
    run(built)
    installed = built.store.events("conf", kinds=["paradigm_installed"])
    assert installed, "the window fills at iteration 2: a request at the start of iteration 3"
    first = installed[0]
    assert first.iteration == 3
    assert 1 <= len(first.payload["ideas"]) <= 3  # capped at paradigm_num_to_generate
    guide_calls = [messages for purpose, messages in chat.calls if purpose == "paradigm"]
    assert guide_calls and "# AdaEvolve paradigm request" in guide_calls[0][0]["content"]
    selects = [e for e in built.store.events("conf", kinds=["select"]) if e.iteration == 3]
    assert "paradigm" in selects[0].payload["info"]
    before = [p for p in built.store.programs("conf") if p.iteration < 3]
    best = max(p.score for p in before)
    parent = next(p for p in before if p.id == selects[0].payload["parent"])
    assert parent.score == best  # the global best, whatever was sampled
    idea = first.payload["ideas"][0]
    prompts = [m for purpose, m in chat.calls if purpose == "propose"]
    assert any(idea in m[-1]["content"] for m in prompts)
    memory = built.scaffold.memory
    assert isinstance(memory, ParadigmMemory)
    assert memory.tried  # a later batch archived the used ideas with their outcome
    assert {t["outcome"] for t in memory.tried} <= {"SUCCESS", "FAILED"}


def test_a_failing_guide_model_never_fails_the_run(tmp_path: Path) -> None:
    built = build("adaevolve", tmp_path / "s.sqlite", iterations=6, overrides=STAGNANT)
    built.controller.model = OfflineChat(seed=0, fail=lambda purpose, n: purpose == "paradigm")
    run(built)
    assert built.store.get_run("conf").status == "completed"
    failed = built.store.events("conf", kinds=["paradigm_generation_failed"])
    assert [e.iteration for e in failed] == [3, 4, 5, 6]  # no cooldown: asked again each time
    assert all(len(e.payload["errors"]) == 3 for e in failed)
    assert not built.store.events("conf", kinds=["paradigm_installed"])


def test_paradigm_ablation_never_calls_the_guide(tmp_path: Path) -> None:
    overrides = [*STAGNANT, "memory.use_paradigm_breakthrough=false"]
    built = build("adaevolve", tmp_path / "s.sqlite", iterations=8, overrides=overrides)
    chat = OfflineChat(seed=0)
    built.controller.model = chat
    run(built)
    assert not [p for p, _ in chat.calls if p == "paradigm"]
    assert not built.store.events("conf", kinds=["paradigm_installed"])


class _Answer:
    def __init__(self, text: str) -> None:
        self.text = text


class _FiveIdeas:
    calls = 0

    async def generate(self, prompt: object, *, purpose: str = "propose") -> _Answer:
        self.calls += 1
        ideas = [{"idea": f"i{k}", "description": "d", "approach_type": f"t{k}"} for k in range(5)]
        return _Answer(json.dumps({"ideas": ideas}))


def test_installed_ideas_are_capped_at_the_number_asked_for() -> None:
    population = AdaEvolveArchipelago(ArchipelagoConfig())
    population.add(program("p0", "def f():\n    return 1\n", 0.5))
    memory = ParadigmMemory(
        ParadigmMemoryConfig(paradigm_window_size=1, paradigm_num_to_generate=2),
        population,
        TaskInfo(description="toy"),
    )
    memory.tick(False, 0.5)
    step = FakeStep(1)
    step.llm = _FiveIdeas()
    asyncio.run(memory.start_iteration(step))  # type: ignore[arg-type]
    assert [i["idea"] for i in memory.active] == ["i0", "i1"]
    kind, payload = step.events[0]
    assert kind == "paradigm_installed" and payload["offered"] == 5
