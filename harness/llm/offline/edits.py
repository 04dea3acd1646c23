"""Turn line edits into SEARCH/REPLACE blocks that apply exactly, and format answers.

An edit is ``(index, new_lines)``: line ``index`` (0-based) of the program becomes
``new_lines`` (one line for a perturbation, two for an insertion after it).  Each block quotes
the edited line plus as many lines above it as needed for its first whole-line match to be the
intended place, in the text as the earlier blocks left it (the applier's sequential rule).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from harness.diffs import apply_diff, fenced, find_lines

__all__ = ["apply_edits", "diff_text", "fenced", "insertion_anchor"]

Edit = tuple[int, list[str]]


def apply_edits(lines: list[str], edits: Sequence[Edit]) -> list[str]:
    out = list(lines)
    for index, new in sorted(edits, key=lambda e: e[0], reverse=True):
        out[index : index + 1] = new
    return out


def _blocks(lines: list[str], edits: Sequence[Edit]) -> list[tuple[list[str], list[str]]]:
    work = list(lines)
    shift = 0
    blocks = []
    for index, new in sorted(edits, key=lambda e: e[0]):
        at = index + shift
        start = at
        while find_lines(work, work[start : at + 1]) != start:
            start -= 1  # a window starting at line 0 always matches first, so this ends
        search = work[start : at + 1]
        replace = work[start:at] + new
        blocks.append((search, replace))
        work[start : at + 1] = replace
        shift += len(new) - 1
    return blocks


def _format(blocks: list[tuple[list[str], list[str]]]) -> str:
    parts = []
    for search, replace in blocks:
        parts += ["<<<<<<< SEARCH", *search, "=======", *replace, ">>>>>>> REPLACE", ""]
    return "\n".join(parts)


def diff_text(code: str, edits: Sequence[Edit]) -> str:
    """SEARCH/REPLACE blocks for ``edits``, checked to reproduce them with the real applier."""
    lines = code.split("\n")
    expected = "\n".join(apply_edits(lines, edits))
    text = _format(_blocks(lines, edits))
    if apply_diff(code, text).code == expected:
        return text
    # Should not happen; one block from the top of the file cannot match anywhere else.
    last = max(index for index, _ in edits)
    head = apply_edits(lines[: last + 1], edits)
    return _format([(lines[: last + 1], head)])


def insertion_anchor(code: str) -> int | None:
    """Line after which a column-0 statement may go: the end of a top-level statement.

    Prefers the last top-level statement that ends inside the EVOLVE block, else the last one.
    """
    try:
        body = ast.parse(code).body
    except (SyntaxError, ValueError, RecursionError):
        body = []
    lines = code.split("\n")
    block_end = next((i for i, line in enumerate(lines) if "EVOLVE-BLOCK-END" in line), None)
    ends = [stmt.end_lineno - 1 for stmt in body if stmt.end_lineno is not None]
    if block_end is not None and any(e < block_end for e in ends):
        return max(e for e in ends if e < block_end)
    if ends:
        return max(ends)
    filled = [i for i, line in enumerate(lines) if line.strip() and not line[0].isspace()]
    return filled[-1] if filled else None
