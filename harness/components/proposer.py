"""The canonical proposers: SEARCH/REPLACE diffs (with optional full-rewrite fallback) and rewrites.

Both make exactly one ``llm.generate`` call and return every unusable answer as data
(``Proposal(code=None, error=…)``) whose error is written for the model to act on in the next
attempt.  The parsing rules live in :mod:`harness.diffs`.
"""

from __future__ import annotations

from pydantic import Field

from harness.core.blocks import block
from harness.core.proposer import LLM, BaseProposer
from harness.core.records import LLMCall, Program, Prompt, Proposal, TaskInfo
from harness.core.validation import StrictModel
from harness.diffs import (
    apply_diff,
    check_child,
    extract_code,
    find_fences,
    has_diff_markers,
    summarize_rewrite,
)

__all__ = [
    "DiffProposer",
    "DiffProposerConfig",
    "FullRewriteProposer",
    "RewriteProposerConfig",
    "diff_proposer",
    "full_rewrite_proposer",
]

DEFAULT_MAX_SOLUTION_LENGTH = 60000


class _ChildChecks:
    """Shared validation and rewrite handling of the two proposers."""

    def __init__(self, *, max_solution_length: int, language: str) -> None:
        if max_solution_length <= 0:
            raise ValueError("max_solution_length must be positive")
        self.max_solution_length = max_solution_length
        self.language = language

    def _finish(
        self, code: str, parent: Program | None, call: LLMCall, *, mode: str, changes: str
    ) -> Proposal:
        parent_code = parent.code if parent is not None else None
        error = check_child(
            code, parent_code, language=self.language, max_length=self.max_solution_length
        )
        if error:
            return Proposal(None, response=call.text, error=error, mode=mode, llm=call)
        return Proposal(code, response=call.text, changes=changes, mode=mode, llm=call)

    def _rewrite(self, parent: Program | None, call: LLMCall) -> Proposal:
        code = extract_code(call.text, self.language)
        fenced = bool(find_fences(call.text))
        if not fenced and has_diff_markers(call.text):
            return Proposal(
                None,
                response=call.text,
                error="The response contains SEARCH/REPLACE blocks, but a complete program was "
                "asked for: answer with the whole program in one fenced code block.",
                mode="rewrite",
                llm=call,
            )
        if fenced:  # the fence's content, stripped, as both references take it
            code = code.strip()
        proposal = self._finish(
            code,
            parent,
            call,
            mode="rewrite",
            changes=summarize_rewrite(parent.code if parent else None, code),
        )
        if proposal.ok or fenced:
            return proposal
        return Proposal(
            None,
            response=call.text,
            error="The response has no fenced code block, so all of it was taken as the "
            f"program, and that failed: {proposal.error}",
            mode="rewrite",
            llm=call,
        )


class DiffProposer(_ChildChecks, BaseProposer):
    """SEARCH/REPLACE edits of the parent, applied by whole-line matching.

    ``allow_full_rewrite=True`` (AdaEvolve's behaviour, and what cards 000/001 ask of the greedy
    scaffolds; SkyDiscover's default controller does not fall back) takes a response without
    diff blocks but with a code fence as a full rewrite; ``False`` (OpenEvolve diff mode) makes
    it an error.  ``allow_partial_diff=True`` applies the matching blocks of a diff and skips the
    rest (the reference rule) instead of rejecting the whole diff.  With no parent (from scratch)
    or a ``rewrite`` prompt, the response is read as a full program.
    """

    def __init__(
        self,
        allow_full_rewrite: bool = True,
        max_solution_length: int = DEFAULT_MAX_SOLUTION_LENGTH,
        language: str = "python",
        *,
        allow_partial_diff: bool = False,
    ) -> None:
        super().__init__(max_solution_length=max_solution_length, language=language)
        self.allow_full_rewrite = allow_full_rewrite
        self.allow_partial_diff = allow_partial_diff

    async def propose(self, prompt: Prompt, parent: Program | None, llm: LLM) -> Proposal:
        call = await llm.generate(prompt)
        if parent is None or prompt.kind == "rewrite":
            return self._rewrite(parent, call)
        if has_diff_markers(call.text):
            applied = apply_diff(parent.code, call.text, allow_partial=self.allow_partial_diff)
            if applied.code is None:
                return Proposal(None, response=call.text, error=applied.error, llm=call)
            return self._finish(applied.code, parent, call, mode="diff", changes=applied.summary)
        if self.allow_full_rewrite and find_fences(call.text):
            return self._rewrite(parent, call)
        also = " and no fenced code block" if self.allow_full_rewrite else ""
        return Proposal(
            None,
            response=call.text,
            error=f"No SEARCH/REPLACE blocks{also} found in the response. Answer with one or more "
            "blocks: a '<<<<<<< SEARCH' line, existing lines copied exactly from the current "
            "program, a '=======' line, the new lines, a '>>>>>>> REPLACE' line.",
            llm=call,
        )


class FullRewriteProposer(_ChildChecks, BaseProposer):
    """The whole program in one answer: first language fence, else first fence, else all text."""

    response_kind = "rewrite"

    def __init__(
        self, max_solution_length: int = DEFAULT_MAX_SOLUTION_LENGTH, language: str = "python"
    ) -> None:
        super().__init__(max_solution_length=max_solution_length, language=language)

    async def propose(self, prompt: Prompt, parent: Program | None, llm: LLM) -> Proposal:
        return self._rewrite(parent, await llm.generate(prompt))


class DiffProposerConfig(StrictModel):
    #: ``true``: SEARCH/REPLACE edits; ``false``: the model rewrites the whole program.
    diff_based: bool = True
    #: Accept a fenced full program when a diff answer has no SEARCH/REPLACE block.
    allow_full_rewrite: bool = True
    #: Apply the SEARCH/REPLACE blocks that match and skip the others (OpenEvolve); ``false``
    #: rejects a diff with any unmatched block.
    allow_partial_diff: bool = False
    max_solution_length: int = Field(60000, ge=100)


class RewriteProposerConfig(StrictModel):
    max_solution_length: int = Field(60000, ge=100)


@block(
    "diff",
    "One LLM call; SEARCH/REPLACE edits applied by whole-line matching, with an optional "
    "full-rewrite fallback; no-op, syntax and length checks.",
)
def diff_proposer(config: DiffProposerConfig, *, task: TaskInfo) -> BaseProposer:
    if not config.diff_based:
        return FullRewriteProposer(config.max_solution_length, language=task.language)
    return DiffProposer(
        allow_full_rewrite=config.allow_full_rewrite,
        max_solution_length=config.max_solution_length,
        language=task.language,
        allow_partial_diff=config.allow_partial_diff,
    )


@block(
    "full_rewrite",
    "One LLM call answering the whole program (first language fence); no-op, syntax and "
    "length checks.",
)
def full_rewrite_proposer(config: RewriteProposerConfig, *, task: TaskInfo) -> BaseProposer:
    return FullRewriteProposer(config.max_solution_length, language=task.language)
