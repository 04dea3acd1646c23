"""DiffProposer and FullRewriteProposer: one call, every unusable answer returned as data."""

from __future__ import annotations

import pytest

from harness.components.proposer import DiffProposer, FullRewriteProposer
from harness.core.errors import LLMTimeout
from harness.core.records import LLMCall, Program, Prompt

PARENT_CODE = """def f(x):
    a = 0.5
    b = 2
    return a * x + b
"""
PARENT = Program(id="p", code=PARENT_CODE, iteration=0, metrics={}, score=0.0)


class ScriptedLLM:
    """The LLM seam with canned answers; records the prompts it was given."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.prompts: list[Prompt] = []

    async def generate(self, prompt: Prompt, *, purpose: str = "propose") -> LLMCall:
        self.prompts.append(prompt)
        return LLMCall(model="fake", text=self.answers.pop(0))


class FailingLLM:
    async def generate(self, prompt: Prompt, *, purpose: str = "propose") -> LLMCall:
        raise LLMTimeout("model 'fake' timed out")


def block(search: str, replace: str) -> str:
    return f"<<<<<<< SEARCH\n{search}\n=======\n{replace}\n>>>>>>> REPLACE\n"


PROMPT = Prompt(system="s", user="u")


async def test_diff_is_applied_and_the_call_is_attached() -> None:
    llm = ScriptedLLM("Tweak:\n" + block("    a = 0.5", "    a = 0.75"))
    proposal = await DiffProposer().propose(PROMPT, PARENT, llm)
    assert proposal.ok and proposal.mode == "diff"
    assert proposal.code == PARENT_CODE.replace("0.5", "0.75")
    assert "line 2" in proposal.changes
    assert proposal.llm is not None and proposal.llm.model == "fake"
    assert llm.prompts == [PROMPT]


async def test_sequential_blocks_build_on_each_other() -> None:
    answer = block("    b = 2", "    b = 2\n    c = 1") + block(
        "    c = 1\n    return a * x + b", "    c = 3\n    return a * x + b + c"
    )
    proposal = await DiffProposer().propose(PROMPT, PARENT, ScriptedLLM(answer))
    assert proposal.ok
    assert proposal.code.endswith("    b = 2\n    c = 3\n    return a * x + b + c\n")


async def test_unmatched_block_is_a_diagnostic_not_a_child() -> None:
    answer = block("    a = 0.5", "    a = 1.0") + block("    z = 9", "    z = 10")
    proposal = await DiffProposer().propose(PROMPT, PARENT, ScriptedLLM(answer))
    assert proposal.code is None
    assert "Block 2 of 2" in proposal.error and "z = 9" in proposal.error
    assert proposal.response == answer


async def test_partial_diff_option_keeps_matching_blocks() -> None:
    answer = block("    a = 0.5", "    a = 1.0") + block("    z = 9", "    z = 10")
    proposer = DiffProposer(allow_partial_diff=True)
    proposal = await proposer.propose(PROMPT, PARENT, ScriptedLLM(answer))
    assert proposal.code == PARENT_CODE.replace("0.5", "1.0")


async def test_noop_diff_is_rejected() -> None:
    proposal = await DiffProposer().propose(
        PROMPT, PARENT, ScriptedLLM(block("    a = 0.5", "    a = 0.5"))
    )
    assert proposal.code is None and "no-op" in proposal.error


async def test_stray_separator_never_reaches_a_child() -> None:
    answer = "<<<<<<< SEARCH\n    a = 0.5\n=======\n    a = 1\n=======\n    a = 2\n>>>>>>> REPLACE"
    proposal = await DiffProposer().propose(PROMPT, PARENT, ScriptedLLM(answer))
    assert proposal.code is None
    assert "second '=======' line" in proposal.error


async def test_indentation_mismatch_is_explained() -> None:
    answer = block("a = 0.5\nb = 2", "a = 1\nb = 2")
    proposal = await DiffProposer().propose(PROMPT, PARENT, ScriptedLLM(answer))
    assert proposal.code is None and "indentation differs" in proposal.error


REWRITE = "Here is a better one:\n```python\ndef f(x):\n    return 3 * x\n```\n"


async def test_fenced_answer_without_blocks_is_a_full_rewrite_when_allowed() -> None:
    proposal = await DiffProposer().propose(PROMPT, PARENT, ScriptedLLM(REWRITE))
    assert proposal.ok and proposal.mode == "rewrite"
    # The fence's content, stripped (SkyDiscover's and OpenEvolve's parse_full_rewrite).
    assert proposal.code == "def f(x):\n    return 3 * x"
    assert proposal.changes.startswith("Full rewrite: 4 -> 2 lines")


async def test_fenced_answer_without_blocks_is_an_error_in_strict_diff_mode() -> None:
    proposer = DiffProposer(allow_full_rewrite=False)
    proposal = await proposer.propose(PROMPT, PARENT, ScriptedLLM(REWRITE))
    assert proposal.code is None
    assert proposal.error.startswith("No SEARCH/REPLACE blocks found")


async def test_answer_with_neither_blocks_nor_fence() -> None:
    proposal = await DiffProposer().propose(PROMPT, PARENT, ScriptedLLM("Make a bigger."))
    assert "No SEARCH/REPLACE blocks and no fenced code block" in proposal.error


async def test_from_scratch_and_rewrite_prompts_read_a_whole_program() -> None:
    scratch = await DiffProposer().propose(PROMPT, None, ScriptedLLM(REWRITE))
    assert scratch.ok and scratch.mode == "rewrite" and scratch.changes == "New program: 2 lines"
    rewrite_prompt = Prompt(system="s", user="u", kind="rewrite")
    rewritten = await DiffProposer().propose(rewrite_prompt, PARENT, ScriptedLLM(REWRITE))
    assert rewritten.ok and rewritten.mode == "rewrite"


async def test_syntax_error_is_reported_with_position() -> None:
    answer = block("    return a * x + b", "    return a * (x + b")
    proposal = await DiffProposer().propose(PROMPT, PARENT, ScriptedLLM(answer))
    assert proposal.code is None
    assert "at line 4, column" in proposal.error and "^" in proposal.error


async def test_too_long_child_is_rejected() -> None:
    answer = block("    b = 2", "    b = 2\n    pad = '" + "x" * 200 + "'")
    proposal = await DiffProposer(max_solution_length=150).propose(
        PROMPT, PARENT, ScriptedLLM(answer)
    )
    assert proposal.code is None and "over the limit of 150" in proposal.error


async def test_llm_failure_propagates() -> None:
    with pytest.raises(LLMTimeout):
        await DiffProposer().propose(PROMPT, PARENT, FailingLLM())


async def test_full_rewrite_rules() -> None:
    proposer = FullRewriteProposer()
    two = "```text\nnot code\n```\n```python\nx = 1\n```"
    assert (await proposer.propose(PROMPT, PARENT, ScriptedLLM(two))).code == "x = 1"
    bare = await proposer.propose(PROMPT, PARENT, ScriptedLLM("x = 2\n"))
    assert bare.code == "x = 2\n" and bare.mode == "rewrite"


async def test_full_rewrite_without_fence_explains_what_was_tried() -> None:
    proposal = await FullRewriteProposer().propose(
        PROMPT, PARENT, ScriptedLLM("I think the answer is to scale a.")
    )
    assert proposal.code is None
    assert "no fenced code block" in proposal.error and "SyntaxError" in proposal.error


async def test_full_rewrite_rejects_a_diff_answer_and_a_noop() -> None:
    proposer = FullRewriteProposer()
    diff = await proposer.propose(PROMPT, PARENT, ScriptedLLM(block("    b = 2", "    b = 3")))
    assert diff.code is None and "a complete program was asked for" in diff.error
    same = await proposer.propose(PROMPT, PARENT, ScriptedLLM(f"```python\n{PARENT_CODE}```"))
    assert same.code is None and "no-op" in same.error


def test_max_solution_length_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        DiffProposer(max_solution_length=0)
