"""The default prompt: every code block is fenced so the code cannot close it early; its
previous attempts are found walking back from the newest member."""

from __future__ import annotations

import random
import re
from pathlib import Path

import jinja2
import pytest

from harness.components import prompt as prompt_module
from harness.components.population import InMemoryPopulation
from harness.components.prompt import (
    DefaultPromptBuilder,
    DefaultPromptConfig,
    previous_attempts,
    template_env,
)
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


def test_a_plain_text_system_template_is_rendered_once_and_any_other_every_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rendered: list[str | None] = []
    real = prompt_module._render

    def counting(template: jinja2.Template, **context: object) -> str:
        rendered.append(template.name)
        return real(template, **context)

    monkeypatch.setattr(prompt_module, "_render", counting)
    plain = DefaultPromptBuilder()  # the shipped system.j2 is plain text
    first = plain.system_message()
    assert [plain.system_message() for _ in range(3)] == [first] * 3
    assert rendered == ["system.j2"]  # once, when the builder was made
    assert first == (prompt_module.TEMPLATES / "system.j2").read_text().strip()

    folder = tmp_path / "tpl"
    folder.mkdir()
    (folder / "system.j2").write_text("{# a comment #}Plain {{ 'a' ~ 'b' }} text\n")
    rendered.clear()
    dynamic = DefaultPromptBuilder(DefaultPromptConfig(template_dir=str(folder)))
    assert [dynamic.system_message() for _ in range(3)] == ["Plain ab text"] * 3
    assert rendered == ["system.j2"] * 3  # an expression: rendered each time, as before
    (folder / "system.j2").write_text("{# only a comment #}Plain text\n")
    rendered.clear()
    commented = DefaultPromptBuilder(DefaultPromptConfig(template_dir=str(folder)))
    assert [commented.system_message() for _ in range(2)] == ["Plain text"] * 2
    assert rendered == ["system.j2"]


def test_the_shipped_templates_read_items_as_attribute_access_would() -> None:
    """``h["id"]`` reads a dict without the failed attribute lookup ``h.id`` makes first; the
    prompts are the same to the byte, every section filled."""
    env = template_env(prompt_module.TEMPLATES)
    context = {
        "task": "Make the radius large.",
        "memory": "Try a lattice.",
        "metrics": [("combined_score", "0.5")],
        "feedback": "stdout: ok",
        "history": [
            {"id": f"p{i}", "score": "0.9", "outcome": "improvement", "changes": "Change 1"}
            for i in range(3)
        ],
        "failures": [
            {"index": 1, "stage": "evaluate", "error": "E", "traceback": "T", "code": FAILED},
            {"index": 2, "stage": "propose", "error": "F", "traceback": "", "code": ""},
        ],
        "inspirations": [
            {"label": "Top", "id": "q1", "score": "0.8", "code": INSPIRATION.rstrip("\n")}
        ],
        "rewrite": False,
        "evolve_block": True,
        "timeout": "30",
        "parent_label": "Parent",
        "code": PARENT.rstrip("\n"),
        "language": "python",
    }
    for name in ("user.j2", "scratch.j2"):
        source = (prompt_module.TEMPLATES / name).read_text()
        assert '["' in source
        by_attribute = re.sub(r'(\w+)\["(\w+)"\]', r"\1.\2", source)
        assert env.get_template(name).render(**context) == env.from_string(by_attribute).render(
            **context
        )
