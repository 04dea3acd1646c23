"""The default prompt: every code block is fenced so the code cannot close it early."""

from __future__ import annotations

from harness.components.prompt import DefaultPromptBuilder
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
