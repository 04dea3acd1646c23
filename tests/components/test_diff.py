"""SEARCH/REPLACE parsing and application, full-rewrite extraction and child checks."""

from __future__ import annotations

import pytest

from harness.diffs import (
    DiffBlock,
    apply_blocks,
    apply_diff,
    check_child,
    check_length,
    check_syntax,
    extract_code,
    find_fences,
    has_diff_markers,
    is_noop,
    parse_diff,
    summarize_rewrite,
)

PROGRAM = """import math


def area(r):
    scale = 1.0
    return math.pi * r * r * scale


def main():
    total = 0
    for r in (1, 2, 3):
        total += area(r)
    return total
"""


def block(search: str, replace: str) -> str:
    return f"<<<<<<< SEARCH\n{search}\n=======\n{replace}\n>>>>>>> REPLACE\n"


def test_single_block_replaces_whole_lines() -> None:
    result = apply_diff(PROGRAM, block("    scale = 1.0", "    scale = 2.0"))
    assert result.error == ""
    assert result.code == PROGRAM.replace("scale = 1.0", "scale = 2.0")
    assert "line 5" in result.summary and "scale = 2.0" in result.summary


def test_later_search_matches_text_introduced_by_earlier_replace() -> None:
    response = block("    scale = 1.0", "    scale = 1.0\n    offset = 0.5") + block(
        "    offset = 0.5\n    return math.pi * r * r * scale",
        "    offset = 0.25\n    return math.pi * r * r * scale + offset",
    )
    result = apply_diff(PROGRAM, response)
    assert result.error == ""
    assert "    offset = 0.25\n    return math.pi * r * r * scale + offset\n" in result.code
    assert "offset = 0.5" not in result.code


def test_block_replaces_only_first_match() -> None:
    code = "x = 1\ny = 2\nx = 1\n"
    assert apply_diff(code, block("x = 1", "x = 9")).code == "x = 9\ny = 2\nx = 1\n"


def test_unmatched_block_rejects_whole_diff_with_snippet() -> None:
    response = block("    scale = 1.0", "    scale = 3.0") + block(
        "    for radius in (1, 2, 3):", "    for radius in (4,):"
    )
    result = apply_diff(PROGRAM, response)
    assert result.code is None
    assert result.unmatched == (2,)
    assert "Block 2 of 2" in result.error
    assert "for radius in (1, 2, 3):" in result.error
    assert "SEARCH line 1 does not occur" in result.error


def test_partial_mode_applies_matching_blocks_like_the_reference() -> None:
    response = block("    scale = 1.0", "    scale = 3.0") + block("nope = 1", "nope = 2")
    result = apply_diff(PROGRAM, response, allow_partial=True)
    assert result.code == PROGRAM.replace("scale = 1.0", "scale = 3.0")
    assert result.unmatched == (2,)
    assert "Skipped unmatched blocks: 2" in result.summary


def test_partial_mode_still_fails_when_nothing_matches() -> None:
    result = apply_diff(PROGRAM, block("nope = 1", "nope = 2"), allow_partial=True)
    assert result.code is None and result.unmatched == (1,)


def test_indentation_mismatch_gets_a_hint() -> None:
    result = apply_diff(PROGRAM, block("scale = 1.0\nreturn math.pi * r * r * scale", "x = 1"))
    assert result.code is None
    assert "indentation differs" in result.error


def test_blank_line_mismatch_gets_a_hint() -> None:
    result = apply_diff(PROGRAM, block("import math\ndef area(r):", "import math"))
    assert "blank lines differ" in result.error


def test_block_stale_after_earlier_block_gets_a_hint() -> None:
    response = block("    scale = 1.0", "    scale = 2.0") + block(
        "    scale = 1.0\n    return math.pi * r * r * scale", "    return 0"
    )
    result = apply_diff(PROGRAM, response)
    assert result.code is None
    assert "earlier block already changed" in result.error


def test_lines_present_but_not_consecutive_are_explained() -> None:
    result = apply_diff(PROGRAM, block("import math\n    scale = 1.0", "import math"))
    assert "not consecutively" in result.error


def test_trailing_whitespace_is_ignored_when_matching() -> None:
    code = "a = 1   \nb = 2\n"
    assert apply_diff(code, block("a = 1\nb = 2", "a = 1\nb = 3")).code == "a = 1\nb = 3\n"


def test_stray_second_separator_is_an_error_never_spliced() -> None:
    response = "\n".join(
        ["<<<<<<< SEARCH", "    scale = 1.0", "=======", "    scale = 2.0", "=======", "    x"]
        + [">>>>>>> REPLACE", ""]
    )
    parsed = parse_diff(response)
    assert parsed.blocks == ()
    assert "second '=======' line (response line 5)" in parsed.error
    assert apply_diff(PROGRAM, response).code is None


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("<<<<<<< SEARCH\na\n=======\nb\n", "has no '>>>>>>> REPLACE' line"),
        ("<<<<<<< SEARCH\na\n>>>>>>> REPLACE\n", "without a '=======' line"),
        ("<<<<<<< SEARCH\na\n<<<<<<< SEARCH\n", "not closed before another"),
        ("text\n>>>>>>> REPLACE\n", "without a '<<<<<<< SEARCH' before it"),
    ],
)
def test_malformed_blocks_are_errors(response: str, expected: str) -> None:
    assert expected in parse_diff(response).error


def test_no_blocks_is_an_error() -> None:
    result = apply_diff(PROGRAM, "I would make the scale bigger.")
    assert result.code is None and "No SEARCH/REPLACE blocks" in result.error


def test_blocks_inside_a_markdown_fence_and_crlf_are_parsed() -> None:
    response = "Here:\r\n```python\r\n" + block("x = 1", "x = 2").replace("\n", "\r\n") + "```\r\n"
    assert parse_diff(response).blocks == (DiffBlock("x = 1", "x = 2", 3),)


def test_trailing_blank_lines_of_each_side_are_dropped() -> None:
    parsed = parse_diff("<<<<<<< SEARCH\nx = 1\n\n\n=======\nx = 2\n   \n>>>>>>> REPLACE")
    assert parsed.blocks[0].search == "x = 1" and parsed.blocks[0].replace == "x = 2"


def test_empty_replace_deletes_lines() -> None:
    assert apply_diff("a\nb\nc\n", block("b", "")).code == "a\nc\n"


def test_empty_search_only_fills_an_empty_program() -> None:
    filled = apply_blocks("", [DiffBlock("", "x = 1")])
    assert filled.code == "x = 1\n"
    rejected = apply_blocks("y = 0\n", [DiffBlock("", "x = 1")])
    assert rejected.code is None and "SEARCH is empty" in rejected.error


def test_has_diff_markers() -> None:
    assert has_diff_markers("intro\n<<<<<<< SEARCH\n")
    assert not has_diff_markers("a <<<<<<< SEARCH inside a sentence")


def test_fences_need_a_long_enough_closing_fence() -> None:
    text = "````python\nprint('```')\n```\nx = 1\n````\n```\nsecond\n```"
    fences = find_fences(text)
    assert [f.body for f in fences] == ["print('```')\n```\nx = 1", "second"]
    assert find_fences("```py\nunclosed")[0].closed is False


def test_full_rewrite_prefers_the_language_fence_then_first_fence_then_all() -> None:
    tagged = "```text\nnotes\n```\n```python\nx = 1\n```"
    assert extract_code(tagged) == "x = 1"
    assert extract_code("```\nx = 2\n```\n```js\ny\n```") == "x = 2"
    assert extract_code("x = 3") == "x = 3"
    assert extract_code("```py\nx = 4\n```") == "x = 4"


def test_syntax_error_names_line_and_column() -> None:
    message = check_syntax("x = 1\ny = (2 +\n")
    assert message.startswith("SyntaxError at line 2")
    message = check_syntax("def f():\nreturn 1\n")
    assert "IndentationError at line 2" in message and "return 1" in message
    assert check_syntax("return 1\n").startswith("SyntaxError at line 1")  # compile, not ast
    assert check_syntax("x = = 1").count("^") == 1
    assert check_syntax("not python at all {", language="text") == ""
    assert check_syntax("x = '\\d'\n") == ""  # a SyntaxWarning is not an error


def test_length_limit() -> None:
    assert check_length("x" * 10, 10) == ""
    assert "11 characters long, over the limit of 10" in check_length("x" * 11, 10)


def test_noop_ignores_trailing_whitespace_only() -> None:
    assert is_noop("x = 1\n", "x = 1   \n\n")
    assert not is_noop("x = 1\n", "x = 1  # changed\n")


def test_check_child_order_and_messages() -> None:
    assert "identical to the current program" in check_child(
        "x = 1\n", "x = 1", language="python", max_length=100
    )
    assert "over the limit" in check_child("x = 1\n", None, language="python", max_length=3)
    assert "SyntaxError" in check_child("x = (", "x = 1", language="python", max_length=100)
    assert check_child("x = 2\n", "x = 1\n", language="python", max_length=100) == ""


def test_rewrite_summary_counts_changed_lines() -> None:
    assert summarize_rewrite("a\nb\nc\n", "a\nB\nc\nd\n") == "Full rewrite: 3 -> 4 lines (+2 -1)"
    assert summarize_rewrite(None, "a\nb\n") == "New program: 2 lines"
