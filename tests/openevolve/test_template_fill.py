"""The prompt's texts are filled from a parse made once: the same text as ``string.Formatter``
(restricted to plain names) gives, and the same errors."""

from __future__ import annotations

import re
import string
from typing import Any

import pytest

from harness.diffs import fenced
from scaffolds.openevolve.templates import _FENCED, _FORMAT, TemplateSet, _fill

VALUES = {
    "a": "x{y}z",
    "b": 3.14159,
    "c": 7,
    "program_snippet": "print('}')",
    "language": "python",
}


@pytest.mark.parametrize(
    "text",
    [
        "",
        "plain text",
        "{a} and {b} and {a}",
        "braces {{a}} kept, {c:>5}|{b:.2f}|{a!r}|{a!s:^12}|{c!a}",
        "{b:{c}}",  # a field in the spec: filled by the formatter itself
        "{c:}}}",
        "{{}}{a}}}",
    ],
)
def test_a_text_fills_as_the_formatter_fills_it(text: str) -> None:
    assert _fill(text, VALUES) == _FORMAT.vformat(text, (), VALUES)


@pytest.mark.parametrize("text", ["{missing}", "{0}", "{}", "{a.upper}", "{a[0]}", "{a!x}", "{"])
def test_a_bad_text_fails_as_the_formatter_fails(text: str) -> None:
    with pytest.raises(Exception) as expected:
        _FORMAT.vformat(text, (), VALUES)
    with pytest.raises(type(expected.value)):
        _fill(text, VALUES)


def test_every_default_text_renders_as_the_formatter_renders_it() -> None:
    texts = TemplateSet()
    for name, text in texts.templates.items():
        values = {k: f"[{k}: {{x}} ```]" for k in _names(text)}
        values["language"] = "python"
        assert texts.render(name, **dict(values)) == _formatter_render(text, dict(values))
    for name, text in texts.fragments.items():
        values = {k: 1.5 for k in _names(text)}
        assert texts.fragment(name, **values) == _FORMAT.vformat(text, (), values)


def _formatter_render(text: str, values: dict[str, Any]) -> str:
    """``TemplateSet.render`` as it was: fences substituted by a callback, then ``vformat``."""

    def fence(match: re.Match[str]) -> str:
        key = f"_fenced_{match.group(1)}"
        values[key] = fenced(str(values.get(match.group(1), "")), values["language"])
        return "{" + key + "}"

    return _FORMAT.vformat(_FENCED.sub(fence, text), (), values)


def _names(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}
