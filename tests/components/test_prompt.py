"""The default prompt: every code block is fenced so the code cannot close it early; its
previous attempts are found walking back from the newest member."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from harness.components.population import InMemoryPopulation
from harness.components.prompt import DefaultPromptBuilder, DefaultPromptConfig, previous_attempts
from harness.core.errors import ConfigError
from harness.core.population import ReadOnlyPopulation
from harness.core.prompt import PromptContext
from harness.core.records import Attempt, Program, Selection, TaskInfo
from harness.diffs import apply_diff, find_fences
from harness.llm.config import FaultRates
from harness.llm.offline import OfflineRequest, answer, current_program, default_responders

#: A docstring with a Markdown example: a line of three backticks inside the program.
PARENT = '''def radius():
    """Usage:

```
radius()
```
"""
    return 0.5
'''
INSPIRATION = 'NOTE = """\n````text\nfour backticks\n````\n"""\nscale = 2.0\n'
FAILED = 'x = """\n```\n"""\nraise ValueError(1.5)\n'


def program(pid: str, code: str, score: float) -> Program:
    return Program(id=pid, code=code, iteration=0, metrics={"combined_score": score}, score=score)


def build_prompt() -> str:
    selection = Selection(
        parent=program("p0", PARENT, 0.5), inspirations=(program("p1", INSPIRATION, 0.4),)
    )
    context = PromptContext(
        iteration=1,
        task=TaskInfo(description="Make the radius large.", language="python"),
        attempts=(Attempt(0, "evaluate", "ValueError: 1.5", code=FAILED),),
    )
    return DefaultPromptBuilder().build(selection, context).user


def test_code_with_backtick_lines_stays_whole_in_its_block() -> None:
    bodies = [fence.body for fence in find_fences(build_prompt())]
    assert bodies[-1] == PARENT.rstrip("\n")  # the current program, last
    assert INSPIRATION.rstrip("\n") in bodies
    assert FAILED.rstrip("\n") in bodies


def test_offline_model_edits_a_program_with_a_backtick_line() -> None:
    user = build_prompt()
    request = OfflineRequest("galapagos-offline", (("user", user),), seed=3)
    assert current_program(request) == PARENT.rstrip("\n")
    reply = answer(request, seed=0, faults=FaultRates(), responders=default_responders())
    applied = apply_diff(PARENT, reply)
    assert applied.error == "" and applied.code is not None, applied.error
    assert "return 0.5" not in applied.code  # the one numeric literal was perturbed


def _previous_by_scan(members: list[Program]) -> list[str]:
    """The reference's rule over a full copy of the members (what the walk replaced)."""
    if not members:
        return []
    last = max(p.iteration for p in members[-64:])
    floor = last - 100
    scored = [
        (float(p.metrics["combined_score"]), n, p.id)
        for n, p in enumerate(members)
        if p.iteration > floor and isinstance(p.metrics.get("combined_score"), float)
    ]
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [pid for _, _, pid in scored[:3]]


def test_previous_attempts_walk_back_from_the_newest_as_a_full_scan_would() -> None:
    """Iterations out of order (parallel runs), ties, programs without a score, a capped
    population that evicts: the walk from the newest member picks what a scan of all picks."""
    rng = random.Random(5)
    for capacity in (None, 40):
        population = InMemoryPopulation(capacity=capacity)
        view = ReadOnlyPopulation(population)
        assert previous_attempts(view) == []
        for i in range(400):
            iteration = i + rng.randint(-30, 30)
            score = rng.choice([0.5, 0.25, rng.random()])
            metrics = {"combined_score": score} if rng.random() < 0.8 else {"other": 1.0}
            population.add(
                Program(id=f"p{i}", code="x\n", iteration=iteration, metrics=metrics, score=score)
            )
            got = [p.id for p in previous_attempts(view)]
            assert got == _previous_by_scan(list(population.programs()))


def test_a_template_edited_during_a_run_does_not_change_its_later_prompts(tmp_path: Path) -> None:
    folder = tmp_path / "tpl"
    folder.mkdir()
    (folder / "system.j2").write_text("first wording\n")
    builder = DefaultPromptBuilder(DefaultPromptConfig(template_dir=str(folder)))
    assert builder.system_message().strip() == "first wording"
    (folder / "system.j2").write_text("{{ cycler.__init__ }} edited\n")  # and would be refused
    assert builder.system_message().strip() == "first wording"
    # A new builder (a new run) reads the file again, and checks it again.
    with pytest.raises(ConfigError, match="refused"):
        DefaultPromptBuilder(DefaultPromptConfig(template_dir=str(folder)))
