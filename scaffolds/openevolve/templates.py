"""The ``openevolve_template`` prompt's texts, in OpenEvolve's template format.

A prompt is made of named templates (``diff_user``, ``full_rewrite_user``, ``evolution_history``,
``previous_attempt``, ``top_program``, ``inspirations_section``, ``inspiration_program``) filled
with ``{field}`` values, and *fragments*: the short phrases between them (``fitness_improved``,
``inspiration_type_migrant`` …).  Ours live in ``templates/`` (our own wording, OpenEvolve's
names and fields); a task folder's ``prompt.template_dir`` files and ``fragments.json`` replace
them one by one, as OpenEvolve's ``TemplateManager`` layers a custom directory over its defaults.

Every text is checked when the prompt block is built: a field OpenEvolve does not fill, or a
field of the wrong shape, is a :class:`ConfigError` then, not a prompt that fails mid-run.
Filling is a restricted ``str.format``: plain field names only (no ``{x.attr}``/``{x[0]}``), so a
template supplied by a folder or a client can only place the values it is given.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Callable, Mapping
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from harness.core.errors import ConfigError
from harness.diffs import fenced

__all__ = ["FRAGMENT_FIELDS", "TEMPLATE_FIELDS", "TemplateSet", "default_fragments"]

DEFAULTS = Path(__file__).with_name("templates")

#: What OpenEvolve fills in its two user templates, plus ours (the task description, failed
#: attempts of this iteration): a folder's own template may use any of them.
USER_FIELDS = frozenset(
    {
        "metrics",
        "fitness_score",
        "feature_coords",
        "feature_dimensions",
        "improvement_areas",
        "evolution_history",
        "current_program",
        "language",
        "artifacts",
        "task_description",
        "failed_attempts",
    }
)
#: Each template OpenEvolve renders and the fields it fills.
TEMPLATE_FIELDS: dict[str, frozenset[str]] = {
    "system_message": frozenset(),
    "diff_user": USER_FIELDS,
    "full_rewrite_user": USER_FIELDS,
    "evolution_history": frozenset({"previous_attempts", "top_programs", "inspirations_section"}),
    "previous_attempt": frozenset({"attempt_number", "changes", "performance", "outcome"}),
    "top_program": frozenset(
        {"program_number", "score", "language", "program_snippet", "key_features"}
    ),
    "inspirations_section": frozenset({"inspiration_programs"}),
    "inspiration_program": frozenset(
        {
            "program_number",
            "score",
            "program_type",
            "language",
            "program_snippet",
            "unique_features",
        }
    ),
}
#: Fragments and the fields each is given.
FRAGMENT_FIELDS: dict[str, frozenset[str]] = {
    "fitness_improved": frozenset({"prev", "current"}),
    "fitness_declined": frozenset({"prev", "current"}),
    "fitness_stable": frozenset({"current"}),
    "exploring_region": frozenset({"features"}),
    "code_too_long": frozenset({"threshold"}),
    "inspiration_changes_prefix": frozenset({"changes"}),
    "inspiration_metrics_excellent": frozenset({"metric_name", "value"}),
    "inspiration_metrics_alternative": frozenset({"metric_name"}),
    "inspiration_no_features_postfix": frozenset({"program_type"}),
}
#: A fenced program in a template; filled with a fence the program cannot close early.
_FENCED = re.compile(r"```\{language\}\n\{(current_program|program_snippet)\}\n```")


class _Formatter(string.Formatter):
    """``str.format`` restricted to plain field names and the values given."""

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> Any:
        if not field_name.isidentifier():
            raise KeyError(field_name)
        return kwargs[field_name], field_name


_FORMAT = _Formatter()

#: A compiled text: (literal, field name or ``None``, format spec, conversion) per part.
_Parts = tuple[tuple[str, str | None, str, str | None], ...]
_CONVERT: dict[str | None, Callable[[Any], Any]] = {
    None: lambda v: v,
    "s": str,
    "r": repr,
    "a": ascii,
}


@lru_cache(maxsize=1024)
def _compiled(text: str) -> _Parts | None:
    """``text`` parsed once; ``None`` when ``_FORMAT`` must fill it (a field in a format spec,
    a conversion ``str.format`` refuses, a name that is not a plain one: its own errors)."""
    try:
        parts = tuple(string.Formatter().parse(text))
    except ValueError:
        return None
    for _, name, spec, conversion in parts:
        if name is not None and (
            not name.isidentifier()
            or any(brace in (spec or "") for brace in "{}")
            or conversion not in _CONVERT
        ):
            return None
    return tuple((lit, name, spec or "", conv) for lit, name, spec, conv in parts)


def _fill(text: str, values: Mapping[str, Any]) -> str:
    """``_FORMAT.vformat(text, (), values)``, from the parsed text (``string.Formatter`` parses
    and fills in Python on every call)."""
    parts = _compiled(text)
    if parts is None:
        return _FORMAT.vformat(text, (), values)
    if len(parts) == 1 and parts[0][1] is None:  # no field
        return parts[0][0]
    out = []
    for literal, name, spec, conversion in parts:
        out.append(literal)
        if name is not None:
            out.append(format(_CONVERT[conversion](values[name]), spec))
    return "".join(out)


#: ``fenced``, remembered: an island's top programs are shown prompt after prompt.
_fenced = lru_cache(maxsize=512)(fenced)


@lru_cache(maxsize=256)
def _fence_fields(text: str) -> tuple[str, tuple[str, ...]]:
    """``text`` with each fenced program field replaced by ``{_fenced_<field>}``, and those
    fields in order."""
    names = tuple(m.group(1) for m in _FENCED.finditer(text))
    return _FENCED.sub(lambda m: "{_fenced_" + m.group(1) + "}", text), names


def _fields(text: str) -> set[str]:
    out = set()
    for _, name, _, _ in string.Formatter().parse(text):
        if name is not None:
            out.add(name)
    return out


@cache
def _default_texts() -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    templates = tuple(
        (name, (DEFAULTS / f"{name}.txt").read_text().rstrip("\n")) for name in TEMPLATE_FIELDS
    )
    fragments = json.loads((DEFAULTS / "fragments.json").read_text())
    return templates, tuple(fragments.items())


def default_fragments() -> dict[str, str]:
    return dict(_default_texts()[1])


class TemplateSet:
    """Our templates and fragments with ``templates``/``fragments`` replacing some of them.

    ``variations`` are OpenEvolve's ``prompt.template_variations``: a ``{key}`` of a user
    template that is replaced by one of its texts (chosen per prompt) before filling."""

    def __init__(
        self,
        templates: Mapping[str, str] | None = None,
        fragments: Mapping[str, str] | None = None,
        variations: Mapping[str, list[str]] | None = None,
        *,
        source: str = "prompt.templates",
    ) -> None:
        defaults, default_frags = _default_texts()
        self.templates = dict(defaults)
        self.fragments = dict(default_frags)
        self.variations = {k: list(v) for k, v in (variations or {}).items() if v}
        for name, text in (templates or {}).items():
            if name not in TEMPLATE_FIELDS:
                continue  # another template OpenEvolve has (evaluation, …) is not rendered here
            self.templates[name] = text.rstrip("\n")
        self.fragments.update(fragments or {})
        self._check(source)

    def _check(self, source: str) -> None:
        for name, text in self.templates.items():
            allowed = TEMPLATE_FIELDS[name]
            if name in ("diff_user", "full_rewrite_user"):
                allowed = allowed | set(self.variations)
            for variation in self.variations.values():
                for option in variation:
                    _syntax(option, f"{source}: template_variations")
            bad = _syntax(text, f"{source}: {name}") - allowed
            if bad:
                raise ConfigError(
                    f"{source}: template {name!r} uses {_listed(bad)}, which OpenEvolve does not "
                    f"fill (its fields: {_listed(allowed)}); fix the template"
                )
        for name, text in self.fragments.items():
            if not isinstance(text, str):
                raise ConfigError(f"{source}: fragment {name!r} is not text: {text!r}")
            allowed = FRAGMENT_FIELDS.get(name, frozenset())
            bad = _syntax(text, f"{source}: fragment {name!r}") - allowed
            if bad:
                raise ConfigError(
                    f"{source}: fragment {name!r} uses {_listed(bad)}; it is given "
                    f"{_listed(allowed) if allowed else 'no field'}"
                )

    def fragment(self, name: str, **values: Any) -> str:
        return _fill(self.fragments.get(name, ""), values)

    def render(self, name: str, rng: Any = None, **values: Any) -> str:
        """Template ``name`` filled with ``values``; programs are fenced so they cannot close
        the fence early; ``rng`` picks the template variations (user templates only)."""
        text = self.templates[name]
        if rng is not None and name in ("diff_user", "full_rewrite_user"):
            for key, options in self.variations.items():
                if f"{{{key}}}" in text:
                    text = text.replace(f"{{{key}}}", rng.choice(options))
        language = str(values.get("language", ""))
        text, names = _fence_fields(text)
        for field in names:
            values[f"_fenced_{field}"] = _fenced(str(values.get(field, "")), language)
        return _fill(text, values)


def _syntax(text: str, where: str) -> set[str]:
    try:
        names = _fields(text)
    except ValueError as exc:
        raise ConfigError(f"{where}: not a valid template ({exc}); braces meant as text are "
                          "written {{ and }}") from exc  # fmt: skip
    bad = {n for n in names if not n.isidentifier()}
    if bad:
        raise ConfigError(
            f"{where}: fields must be plain names, got {_listed(bad)} (attribute and index "
            "access are not allowed)"
        )
    return names


def _listed(names: Any) -> str:
    return ", ".join("{" + n + "}" for n in sorted(names))
