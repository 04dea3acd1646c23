"""SEARCH/REPLACE diffs and full rewrites: parse, apply and check a child program (pure, no I/O).

A neutral module: the proposers (components) and the offline model (llm) both use it.

The rules, with the deliberate departures from the reference ``apply_diff`` marked (*):

- A block is ``<<<<<<< SEARCH`` / old lines / ``=======`` / new lines / ``>>>>>>> REPLACE``,
  one marker per line.  Trailing blank lines of either side are dropped.
- A SEARCH matches whole lines, exactly, indentation included; only trailing whitespace is
  ignored (*).  Each block replaces its first match in the text as the blocks before it left
  it, so a later SEARCH may quote lines an earlier REPLACE introduced.
- (*) If any block matches nowhere, the whole diff is rejected and nothing is applied (the
  reference skips such blocks silently).  The diagnostic quotes the block and says why it
  probably failed (indentation, blank lines, an earlier block already changed the lines, the
  first SEARCH line that does not occur).  ``allow_partial=True`` restores the reference rule.
- (*) A second ``=======`` inside one block, a missing marker or a nested SEARCH is a format
  error; nothing is ever spliced into the child.
- An empty SEARCH is valid only against an empty program (it then inserts its REPLACE text).
- A full rewrite is the first fence tagged with the language, else the first fence, else the
  whole response (reference rule).
- A child is rejected before evaluation when it is too long, identical to its parent (ignoring
  trailing whitespace) or, for Python, does not compile (*: the reference never checks).
"""

from __future__ import annotations

import difflib
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "AppliedDiff",
    "DiffBlock",
    "Fence",
    "ParsedDiff",
    "apply_blocks",
    "apply_diff",
    "check_child",
    "check_length",
    "check_syntax",
    "extract_code",
    "fenced",
    "find_fences",
    "find_lines",
    "has_diff_markers",
    "is_noop",
    "parse_diff",
    "summarize_rewrite",
]

_SEARCH = re.compile(r"^\s*<{5,9}\s*SEARCH\s*$")
_SEPARATOR = re.compile(r"^\s*={7}\s*$")
_REPLACE = re.compile(r"^\s*>{5,9}\s*REPLACE\s*$")
_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,})\s*([\w+#.-]*)[^`]*$")
_FENCE_CLOSE = re.compile(r"^ {0,3}(`{3,})\s*$")
_PYTHON = frozenset({"python", "py", "python3"})
_FORMAT = (
    "Each block must be exactly: a '<<<<<<< SEARCH' line, the existing lines, one '=======' "
    "line, the new lines, a '>>>>>>> REPLACE' line."
)
_SNIPPET_LINES = 3
_SNIPPET_WIDTH = 100


@dataclass(frozen=True)
class DiffBlock:
    search: str
    replace: str
    #: 1-based line of the ``<<<<<<< SEARCH`` marker in the response.
    line: int = 0


@dataclass(frozen=True)
class ParsedDiff:
    blocks: tuple[DiffBlock, ...]
    error: str = ""


@dataclass(frozen=True)
class AppliedDiff:
    """The child (``code``), or ``None`` with ``error`` written for the model."""

    code: str | None
    error: str = ""
    summary: str = ""
    #: 1-based numbers of the blocks that matched nowhere.
    unmatched: tuple[int, ...] = ()


@dataclass(frozen=True)
class Fence:
    lang: str
    body: str
    closed: bool = True


def _lines(text: str) -> list[str]:
    return [line.removesuffix("\r") for line in text.split("\n")]


def _side(lines: list[str]) -> str:
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines)


def has_diff_markers(text: str) -> bool:
    """Whether the response tries to be a diff (at least one SEARCH marker line)."""
    return any(_SEARCH.match(line) for line in _lines(text))


def parse_diff(text: str) -> ParsedDiff:
    """Extract the blocks in order; a malformed block is an error, never a guess."""
    blocks: list[DiffBlock] = []
    state = ""  # "" outside a block, else "search" or "replace"
    search: list[str] = []
    replace: list[str] = []
    start = 0

    def fail(what: str) -> ParsedDiff:
        n = len(blocks) + 1
        return ParsedDiff(
            tuple(blocks),
            f"SEARCH/REPLACE block {n} (starting at response line {start}) {what}; "
            f"nothing was applied. {_FORMAT}",
        )

    for no, line in enumerate(_lines(text), 1):
        if _SEARCH.match(line):
            if state:
                return fail(f"is not closed before another '<<<<<<< SEARCH' at line {no}")
            state, start, search, replace = "search", no, [], []
        elif not state:
            if _REPLACE.match(line):
                start = no
                return fail("has a '>>>>>>> REPLACE' line without a '<<<<<<< SEARCH' before it")
        elif _SEPARATOR.match(line):
            if state == "replace":
                return fail(f"has a second '=======' line (response line {no})")
            state = "replace"
        elif _REPLACE.match(line):
            if state == "search":
                return fail("reaches '>>>>>>> REPLACE' without a '=======' line")
            blocks.append(DiffBlock(_side(search), _side(replace), start))
            state = ""
        else:
            (search if state == "search" else replace).append(line)
    if state:
        return fail("has no '>>>>>>> REPLACE' line (was the response cut off?)")
    return ParsedDiff(tuple(blocks))


def find_lines(lines: Sequence[str], search: Sequence[str], start: int = 0) -> int | None:
    """Index of the first whole-line match of ``search`` in ``lines`` (trailing space ignored)."""
    key = [s.rstrip() for s in search]
    if not key:
        return None
    for i in range(start, len(lines) - len(key) + 1):
        if lines[i].rstrip() == key[0] and [x.rstrip() for x in lines[i : i + len(key)]] == key:
            return i
    return None


def _matches_loosely(lines: Sequence[str], search: Sequence[str], *, drop_blank: bool) -> bool:
    """Whether ``search`` matches with indentation ignored (and blank lines, if asked)."""
    key = [s.strip() for s in search if not drop_blank or s.strip()]
    hay = [x.strip() for x in lines if not drop_blank or x.strip()]
    return find_lines(hay, key) is not None


def _why_unmatched(search: list[str], lines: list[str], original: list[str]) -> str:
    if lines != original and find_lines(original, search) is not None:
        return (
            "it matches the program as it was before the earlier blocks of this response, but "
            "an earlier block already changed those lines; blocks apply in order, so quote the "
            "text as the earlier blocks left it, or merge the blocks"
        )
    if _matches_loosely(lines, search, drop_blank=False):
        return "the lines match if indentation is ignored: indentation differs"
    if _matches_loosely(lines, search, drop_blank=True):
        return "the lines match if blank lines are ignored: blank lines differ"
    present = {x.strip() for x in lines}
    for i, s in enumerate(search, 1):
        quoted = s.strip()
        if not quoted or quoted in present:
            continue
        if any(quoted in x for x in present):
            return f"SEARCH line {i} is only part of a line ({_clip(quoted)!r}); quote whole lines"
        return f"SEARCH line {i} does not occur in the current program: {_clip(quoted)!r}"
    return "every SEARCH line occurs in the program, but not consecutively in this order"


def _clip(text: str) -> str:
    return text if len(text) <= _SNIPPET_WIDTH else text[: _SNIPPET_WIDTH - 3] + "..."


def _snippet(search: list[str]) -> str:
    shown = [f"    {_clip(s)}" for s in search[:_SNIPPET_LINES]]
    if len(search) > _SNIPPET_LINES:
        shown.append(f"    ... ({len(search) - _SNIPPET_LINES} more lines)")
    return "\n".join(shown)


def _describe(n: int, at: int, old: list[str], new: list[str]) -> str:
    if len(old) == 1 and len(new) == 1:
        return f"Change {n} (line {at}): {_clip(old[0].strip())} -> {_clip(new[0].strip())}"
    first = next((s.strip() for s in old if s.strip()), "")
    return f"Change {n} (line {at}): {len(old)} lines starting {_clip(first)!r} -> {len(new)} lines"


def apply_blocks(
    original: str, blocks: Sequence[DiffBlock], *, allow_partial: bool = False
) -> AppliedDiff:
    """Apply blocks in order to the progressively modified text (see the module rules)."""
    base = _lines(original)
    lines = list(base)
    failures: list[tuple[int, str]] = []
    changes: list[str] = []
    for n, block in enumerate(blocks, 1):
        new = _lines(block.replace) if block.replace else []
        if not block.search.strip():
            if any(x.strip() for x in lines):
                failures.append((n, "its SEARCH is empty; quote the existing lines to change"))
                continue
            lines = new + [""]
            changes.append(f"Change {n}: new program of {len(new)} lines")
            continue
        search = _lines(block.search)
        at = find_lines(lines, search)
        if at is None:
            failures.append((n, _why_unmatched(search, lines, base)))
            continue
        changes.append(_describe(n, at + 1, lines[at : at + len(search)], new))
        lines[at : at + len(search)] = new
    unmatched = tuple(n for n, _ in failures)
    if failures and (not allow_partial or len(failures) == len(blocks)):
        return AppliedDiff(None, _unmatched_error(blocks, failures), unmatched=unmatched)
    if unmatched:
        changes.append(f"Skipped unmatched blocks: {', '.join(map(str, unmatched))}")
    return AppliedDiff("\n".join(lines), summary="\n".join(changes), unmatched=unmatched)


def _unmatched_error(blocks: Sequence[DiffBlock], failures: list[tuple[int, str]]) -> str:
    total = len(blocks)
    parts = [
        f"{len(failures)} of {total} SEARCH/REPLACE blocks did not match the current program, "
        "so the edit was rejected and nothing was applied."
    ]
    for n, why in failures[:3]:
        parts.append(
            f"Block {n} of {total}, SEARCH begins:\n"
            f"{_snippet(_lines(blocks[n - 1].search))}\nWhy: {why}."
        )
    if len(failures) > 3:
        parts.append(f"({len(failures) - 3} more unmatched blocks not shown)")
    parts.append(
        "Each SEARCH must repeat consecutive lines of the current program exactly "
        "(whole lines, same indentation)."
    )
    return "\n".join(parts)


def apply_diff(original: str, response: str, *, allow_partial: bool = False) -> AppliedDiff:
    """Parse ``response`` and apply its blocks to ``original``."""
    parsed = parse_diff(response)
    if parsed.error:
        return AppliedDiff(None, parsed.error)
    if not parsed.blocks:
        return AppliedDiff(None, f"No SEARCH/REPLACE blocks found in the response. {_FORMAT}")
    return apply_blocks(original, parsed.blocks, allow_partial=allow_partial)


def fenced(code: str, language: str = "python") -> str:
    """``code`` in a fence it cannot close early (longer than any backtick run starting a line)."""
    stripped = [line.lstrip(" ") for line in code.split("\n")]
    runs = [len(line) - len(line.lstrip("`")) for line in stripped]
    ticks = "`" * max(3, max(runs, default=0) + 1)
    return f"{ticks}{language}\n{code.rstrip(chr(10))}\n{ticks}"


def find_fences(text: str) -> list[Fence]:
    """Fenced code blocks in order; a closing fence needs at least the opening's backticks."""
    lines = _lines(text)
    out: list[Fence] = []
    i = 0
    while i < len(lines):
        opened = _FENCE_OPEN.match(lines[i])
        if opened:
            ticks, lang = len(opened.group(1)), opened.group(2).lower()
            for j in range(i + 1, len(lines)):
                closed = _FENCE_CLOSE.match(lines[j])
                if closed and len(closed.group(1)) >= ticks:
                    out.append(Fence(lang, "\n".join(lines[i + 1 : j])))
                    i = j
                    break
            else:
                out.append(Fence(lang, "\n".join(lines[i + 1 :]), closed=False))
                break
        i += 1
    return out


def extract_code(response: str, language: str = "python") -> str:
    """Full-rewrite rule: the first fence tagged with the language, else the first, else all."""
    fences = find_fences(response)
    names = _PYTHON if language.lower() in _PYTHON else {language.lower()}
    for fence in fences:
        if fence.lang in names:
            return fence.body
    return fences[0].body if fences else response


def _normalized(code: str) -> str:
    return "\n".join(line.rstrip() for line in _lines(code)).strip("\n")


def is_noop(parent: str, child: str) -> bool:
    """Identical up to trailing whitespace: evaluating it again would waste the evaluation."""
    return _normalized(parent) == _normalized(child)


def check_length(code: str, max_length: int) -> str:
    if len(code) <= max_length:
        return ""
    return (
        f"The program is {len(code)} characters long, over the limit of {max_length}; "
        "propose a shorter program."
    )


def check_syntax(code: str, language: str = "python") -> str:
    """Compile (never run) a Python child; the error names the line and column."""
    if language.lower() not in _PYTHON:
        return ""
    try:
        with warnings.catch_warnings():
            # SyntaxWarnings (e.g. invalid escapes) are not errors and must not reach stderr.
            warnings.simplefilter("ignore")
            compile(code, "<candidate>", "exec", dont_inherit=True)
    except SyntaxError as exc:
        return _syntax_message(exc, code)
    except (ValueError, RecursionError, MemoryError) as exc:
        return f"The program cannot be compiled: {type(exc).__name__}: {exc}"
    return ""


def _syntax_message(exc: SyntaxError, code: str) -> str:
    line, col = exc.lineno or 0, exc.offset or 0
    head = f"{type(exc).__name__} at line {line}, column {col}: {exc.msg}"
    source = _lines(code)
    if not 1 <= line <= len(source):
        return head
    gutter = f"{line:>5} | "
    caret = " " * (len(gutter) + max(col - 1, 0)) + "^"
    return f"{head}\n{gutter}{_clip(source[line - 1])}\n{caret}"


def check_child(code: str, parent: str | None, *, language: str, max_length: int) -> str:
    """First reason the child must not be evaluated, or "" when it may be."""
    if error := check_length(code, max_length):
        return error
    if parent is not None and is_noop(parent, code):
        return (
            "The proposed program is identical to the current program (no-op edit); "
            "change the code so it can score differently."
        )
    return check_syntax(code, language)


def summarize_rewrite(parent: str | None, child: str) -> str:
    """A one-line change summary for ``Program.changes``."""
    new = _lines(child.rstrip("\n"))
    if parent is None:
        return f"New program: {len(new)} lines"
    old = _lines(parent.rstrip("\n"))
    added = removed = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new).get_opcodes():
        if tag != "equal":
            removed += i2 - i1
            added += j2 - j1
    return f"Full rewrite: {len(old)} -> {len(new)} lines (+{added} -{removed})"
