"""The offline model's responders: who answers a request, and the two mutation answers.

A :class:`Responder` pairs ``detect`` (is this request mine?) with ``respond`` (the answer
text).  The server asks each responder in order and the first whose ``detect`` is true
answers, so specific responders go before the generic ones (the chain is
:func:`harness.llm.offline.server.default_responders`, the composition root).

Requests are routed by the call's *purpose* (``propose``, ``strategy``, ``guide``,
``paradigm``), request metadata the client sends in the ``X-Galapagos-Purpose`` header, never
by text planted in a prompt: the prompts a scaffold writes are the prompts a real model gets.
Without a purpose (any other OpenAI client) a request is a mutation request.  Those are answered
in the format their instructions ask for: SEARCH/REPLACE edits when the prompt shows the
``<<<<<<< SEARCH`` line, else the whole program.

To answer a new kind of call, write a module next to this one with a function returning a
``Responder`` whose ``detect`` is ``for_purpose("<purpose>")``, and list it first in
``default_responders``.  ``respond`` gets the request and a :class:`ResponseContext` whose
``rng`` is already seeded from (server seed, request seed, model, messages; not the purpose)
and whose ``fault`` is the fault drawn for this answer (a responder may ignore faults it has no
shape for).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from harness.diffs import find_fences, has_diff_markers
from harness.llm.offline.edits import Edit, apply_edits, diff_text, fenced
from harness.llm.offline.faults import malform, runtime_edit, syntax_edit
from harness.llm.offline.mutation import Mutation, mutate

__all__ = [
    "HEADER",
    "OfflineRequest",
    "Responder",
    "ResponseContext",
    "current_program",
    "diff_responder",
    "for_purpose",
    "rewrite_responder",
]

HEADER = (
    "[galapagos offline mutation model] This answer comes from Galapagos' offline mutation "
    "model, not from an LLM: it perturbs numeric literals of the current program."
)


@dataclass(frozen=True)
class OfflineRequest:
    model: str
    #: ``(role, content)`` pairs, content flattened to text.
    messages: tuple[tuple[str, str], ...]
    seed: int | None = None
    #: What the call is for (request metadata, not prompt text); ``None`` when not sent.
    purpose: str | None = None

    @property
    def text(self) -> str:
        return "\n".join(content for _, content in self.messages)

    @property
    def last_user(self) -> str:
        return next((c for role, c in reversed(self.messages) if role == "user"), "")


@dataclass(frozen=True)
class ResponseContext:
    rng: random.Random
    fault: str | None = None


@dataclass(frozen=True)
class Responder:
    name: str
    detect: Callable[[OfflineRequest], bool]
    respond: Callable[[OfflineRequest, ResponseContext], str]


def for_purpose(*purposes: str) -> Callable[[OfflineRequest], bool]:
    """A ``detect`` that is true for requests sent with one of these purposes."""
    wanted = frozenset(purposes)

    def detect(request: OfflineRequest) -> bool:
        return request.purpose in wanted

    return detect


def current_program(request: OfflineRequest) -> str | None:
    """The last fenced block of the last user message that is not itself a diff example."""
    for fence in reversed(find_fences(request.last_user)):
        if fence.closed and fence.body.strip() and not has_diff_markers(fence.body):
            return fence.body
    return None


def _describe(mutations: list[Mutation]) -> str:
    ordered = sorted(mutations, key=lambda m: (m.line, m.col))
    changes = "; ".join(f"line {m.line + 1}: {m.old} -> {m.new}" for m in ordered)
    return f"Perturbed {len(mutations)} numeric literal(s): {changes}."


def _planned(program: str, ctx: ResponseContext) -> tuple[list[Edit], str]:
    """The edits of this answer and a sentence saying what they are."""
    if ctx.fault == "runtime_error" and (edit := runtime_edit(program)) is not None:
        return [edit], "Fault injection: the edited program raises when it runs."
    if ctx.fault == "syntax_error" and (edit := syntax_edit(program, ctx.rng)) is not None:
        return [edit], "Fault injection: the edited program is not valid Python."
    lines = program.split("\n")
    mutated, mutations = mutate(program, ctx.rng)
    new_lines = mutated.split("\n")
    edits = [
        (i, [new]) for i, (old, new) in enumerate(zip(lines, new_lines, strict=True)) if old != new
    ]
    if not edits:
        return [], "The program has no numeric literal to perturb, so no edit is proposed."
    if ctx.fault == "noop":
        index = edits[0][0]
        return [(index, [lines[index]])], "Fault injection: this edit changes nothing."
    return edits, _describe(mutations)


def _no_program() -> str:
    return (
        f"{HEADER}\nNo program was found in the prompt (the current program is expected in the "
        "last fenced code block of the last user message), so there is nothing to edit."
    )


def _answer_diff(request: OfflineRequest, ctx: ResponseContext) -> str:
    program = current_program(request)
    if program is None:
        return _no_program()
    edits, summary = _planned(program, ctx)
    if not edits:
        return f"{HEADER}\n{summary}"
    text = diff_text(program, edits)
    if ctx.fault == "malformed":
        text, kind = malform(text, ctx.rng)
        summary = f"Fault injection: a malformed diff ({kind.replace('_', ' ')})."
    return f"{HEADER}\n{summary}\n\n{text}"


def _answer_rewrite(request: OfflineRequest, ctx: ResponseContext) -> str:
    program = current_program(request)
    if program is None:
        return _no_program()
    if ctx.fault == "malformed":
        return f"{HEADER}\nFault injection: a malformed answer that carries no code block."
    edits, summary = _planned(program, ctx)
    code = "\n".join(apply_edits(program.split("\n"), edits))
    return f"{HEADER}\n{summary}\n\n{fenced(code)}\n"


def _asks_for_diff(request: OfflineRequest) -> bool:
    # The format the instructions ask for, as any model reads it: the SEARCH line on a line of
    # its own (diagnostics quoting it inline, fed back after a failed attempt, must not turn a
    # rewrite prompt into a diff prompt).
    return has_diff_markers(request.text)


def diff_responder() -> Responder:
    """Prompts that ask for SEARCH/REPLACE edits (their instructions show the marker line)."""
    return Responder("diff", _asks_for_diff, _answer_diff)


def rewrite_responder() -> Responder:
    """Everything else with a program: the whole perturbed program in a ``python`` fence."""
    return Responder("rewrite", lambda request: True, _answer_rewrite)
