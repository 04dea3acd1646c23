"""Fault injection: deterministic bad answers that exercise every failure path downstream.

Kinds (rates in ``llm.offline.faults``): ``malformed`` (a stray second separator, a block
without its REPLACE marker, or a SEARCH that matches nothing), ``noop`` (the edit changes
nothing), ``runtime_error`` (valid code that raises when run), ``syntax_error`` (code that does
not compile).
"""

from __future__ import annotations

import random

from harness.llm.config import FaultRates
from harness.llm.offline.edits import Edit, insertion_anchor
from harness.llm.offline.mutation import find_literals

__all__ = ["FAULT_KINDS", "draw_fault", "malform", "runtime_edit", "syntax_edit"]

FAULT_KINDS = ("malformed", "noop", "runtime_error", "syntax_error")
RUNTIME_LINE = (
    'raise RuntimeError("injected by the galapagos offline mutation model (fault injection)")'
)
SYNTAX_LINE = "def injected_by_offline_model(:  # fault injection: not valid Python"
MALFORMED_KINDS = ("stray_separator", "unterminated", "unmatched")


def draw_fault(rates: FaultRates, rng: random.Random) -> str | None:
    """One draw per answer, so enabling faults leaves the draws of the mutation RNG alone."""
    u = rng.random()
    acc = 0.0
    for kind in FAULT_KINDS:
        acc += getattr(rates, kind)
        if u < acc:
            return kind
    return None


def runtime_edit(code: str) -> Edit | None:
    """A top-level ``raise`` after a top-level statement: it fires whenever the program runs."""
    anchor = insertion_anchor(code)
    if anchor is None:
        return None
    return anchor, [code.split("\n")[anchor], RUNTIME_LINE]


def syntax_edit(code: str, rng: random.Random) -> Edit | None:
    """Break a line the way a sloppy edit would (two adjacent numbers), else add a broken line."""
    lines = code.split("\n")
    literals = find_literals(code)
    if literals:
        lit = rng.choice(literals)
        line = lines[lit.line]
        broken = line[: lit.col] + f"{lit.text} {lit.text}" + line[lit.col + len(lit.text) :]
        trial = list(lines)
        trial[lit.line] = broken
        try:
            compile("\n".join(trial), "<fault>", "exec", dont_inherit=True)
        except SyntaxError:
            return lit.line, [broken]
    anchor = insertion_anchor(code)
    if anchor is None:
        return None
    return anchor, [lines[anchor], SYNTAX_LINE]


def malform(diff: str, rng: random.Random) -> tuple[str, str]:
    """Corrupt well-formed SEARCH/REPLACE text; returns the text and which corruption."""
    kind = rng.choice(MALFORMED_KINDS)
    lines = diff.split("\n")
    if kind == "stray_separator":
        end = lines.index(">>>>>>> REPLACE")
        lines[end:end] = ["=======", "# a second separator in one block"]
    elif kind == "unterminated":
        last = len(lines) - 1 - lines[::-1].index(">>>>>>> REPLACE")
        del lines[last]
    else:
        edited = lines.index("=======") - 1  # the last SEARCH line is never blank
        lines[edited] = "    " + lines[edited]
    return "\n".join(lines), kind
