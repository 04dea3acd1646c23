"""``openevolve_template``: OpenEvolve 0.4.0's prompt (``PromptSampler.build_prompt`` as its
parallel worker calls it), in diff mode (``diff_user``) or full-rewrite mode
(``full_rewrite_user``) as the proposer expects.

Sections, in order: current program information (fitness, feature coordinates, focus areas),
the parent's execution output, the evolution history (previous attempts, top programs, diverse
programs, inspirations), the current program, the task.  What the reference feeds it:

- The context comes from the *parent's* island, ranked by ``combined_score`` (else the metric
  mean): the first ``num_top_programs`` are the previous attempts and the top programs, the next
  ``num_diverse_programs`` the pool the diverse programs are drawn from.
- Previous attempts are listed worst first (numbered down to 1); an attempt's outcome compares
  every numeric metric with its parent's.
- Inspirations already shown as top or diverse programs are left out (openevolve#452).
- Feature coordinates are the dimensions the evaluator reports as metrics; built-in ones
  (complexity, diversity) are not metrics, so the line says there are none, as the reference's.

The texts are OpenEvolve-format templates and fragments (:mod:`scaffolds.openevolve.templates`):
ours by default, a task folder's ``prompt.template_dir`` over them.  The diverse programs and the
template variations are drawn with an RNG seeded by the iteration and the parent, so a prompt is
a pure function of its inputs; in reference mode (``loop.reference_mode``) from the stream the
reference's worker process draws from (see :mod:`scaffolds.openevolve.selection`).
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from pydantic import Field

from harness.components.prompt import DefaultPromptBuilder
from harness.core.blocks import block
from harness.core.prompt import BasePromptBuilder, PromptContext
from harness.core.proposer import BaseProposer
from harness.core.records import Program, Prompt, Selection
from harness.core.validation import StrictModel
from scaffolds.openevolve.features import fitness, numeric_mean
from scaffolds.openevolve.population import MapElitesIslandsPopulation
from scaffolds.openevolve.selection import ThreeTierPolicy
from scaffolds.openevolve.templates import TemplateSet

__all__ = ["OpenEvolvePromptBuilder", "OpenEvolvePromptConfig"]

_ANSI = re.compile(r"\x1B(?:[@-Z\\-_]|\[[0-?]*[ -/]*[@-~])")
_REDACT = (
    (re.compile(r"[A-Za-z0-9]{32,}", re.IGNORECASE), "<REDACTED_TOKEN>"),
    (re.compile(r"sk-[A-Za-z0-9]{48}", re.IGNORECASE), "<REDACTED_API_KEY>"),
    (re.compile(r"password[=:]\s*[^\s]+", re.IGNORECASE), "password=<REDACTED>"),
    (re.compile(r"token[=:]\s*[^\s]+", re.IGNORECASE), "token=<REDACTED>"),
)


class OpenEvolvePromptConfig(StrictModel):
    #: Replaces the default system message (a task card's ``system_message`` lands here).
    system_message: str | None = None
    #: Templates replacing ours, by OpenEvolve's names (``diff_user``, ``full_rewrite_user``,
    #: ``evolution_history``, ``previous_attempt``, ``top_program``, ``inspirations_section``,
    #: ``inspiration_program``): a folder's ``prompt.template_dir`` files land here.
    templates: dict[str, str] = Field(default_factory=dict)
    #: Fragments replacing ours (a folder's ``template_dir/fragments.json``).
    fragments: dict[str, str] = Field(default_factory=dict)
    #: Replace a ``{key}`` of the user template by one of ``template_variations[key]``.
    use_template_stochasticity: bool = True
    template_variations: dict[str, list[str]] = Field(default_factory=dict)
    #: Top programs (and previous attempts) shown; ``null``: ``selection_policy.num_inspirations``.
    num_top_programs: int | None = Field(None, ge=0)
    #: Diverse programs drawn from the next-best; ``null``: ``selection_policy.num_diverse``.
    num_diverse_programs: int | None = Field(None, ge=0)
    #: Show the parent's evaluation artifacts ("Last Execution Output").
    include_artifacts: bool = True
    #: Characters of each artifact shown.
    max_artifact_bytes: int = Field(20 * 1024, ge=0)
    #: Strip ANSI codes and redact token-like strings in artifacts (the reference's filter).
    artifact_security_filter: bool = True
    #: Suggest simplifying when the current program is longer than this (``null``: never).
    suggest_simplification_after_chars: int | None = Field(500, ge=1)
    #: An inspiration's change summary shorter than this is shown with it.
    include_changes_under_chars: int | None = Field(100, ge=1)
    #: An inspiration with at most this many lines is labelled concise.
    concise_implementation_max_lines: int | None = Field(10, ge=1)
    #: An inspiration with at least this many lines is labelled comprehensive.
    comprehensive_implementation_min_lines: int | None = Field(50, ge=1)


class ContextSource(Protocol):
    """Where the prompt's island context comes from (the three-tier policy): the island
    members as they were when the parent was sampled, and the RNG of the prompt's draws in
    reference mode (``None``: live population, per-prompt seeded RNG)."""

    def sampled_context(self, iteration: int) -> list[Program] | None: ...

    def prompt_rng(self) -> random.Random | None: ...


def _fmt(value: Any, digits: int = 4) -> str:
    if isinstance(value, (int, float)):
        try:
            return f"{value:.{digits}f}"
        except (TypeError, ValueError):
            return str(value)
    return str(value)


#: Rendered program sections kept by a prompt builder (all dropped when full).
SECTIONS_KEPT = 4096


class OpenEvolvePromptBuilder(BasePromptBuilder):
    def __init__(
        self,
        config: OpenEvolvePromptConfig,
        population: MapElitesIslandsPopulation,
        *,
        num_top: int = 3,
        num_diverse: int = 2,
        diff_mode: bool = True,
        context: ContextSource | None = None,
    ) -> None:
        self.config = config
        self.population = population
        self.num_top = num_top if config.num_top_programs is None else config.num_top_programs
        self.num_diverse = (
            num_diverse if config.num_diverse_programs is None else config.num_diverse_programs
        )
        self.diff_mode = diff_mode
        self.context_source = context
        self.dimensions = list(population.config.feature_dimensions)
        variations = config.template_variations if config.use_template_stochasticity else {}
        self.texts = TemplateSet(config.templates, config.fragments, variations)
        self._scratch = DefaultPromptBuilder()
        #: Programs' sections as rendered (``_section``): (kind, number, language, program id)
        #: -> (the program, its text).
        self._sections: dict[tuple[str, int, str, str], tuple[Program, str]] = {}

    def system_message(self) -> str:
        if self.config.system_message is not None:
            return self.config.system_message
        return self.texts.templates["system_message"]

    def build(self, selection: Selection, context: PromptContext) -> Prompt:
        parent = selection.parent
        if parent is None:  # from scratch: ask for a whole program, as the default builder does
            scratch = self._scratch.build(selection, context)
            return Prompt(system=self.system_message(), user=scratch.user, kind=scratch.kind)
        source = self.context_source
        members = source.sampled_context(context.iteration) if source is not None else None
        rng = source.prompt_rng() if source is not None else None
        if rng is None:
            rng = random.Random(f"{context.iteration}:{parent.id}")
        count = self.num_top + self.num_diverse
        if members is None:  # the live island, ranked as its members come and go
            island = self.population.island_of(parent.id) or 0
            ranked = self.population.island_ranked(island, count, _program_rank)
        else:
            ranked = sorted(members, key=_program_rank, reverse=True)
        shown = ranked[:count]
        previous = ranked[: self.num_top]
        kind = "diff" if self.diff_mode else "rewrite"
        template = "diff_user" if self.diff_mode else "full_rewrite_user"
        # The reference draws the variations after the history (whose diverse draw comes first).
        history = self._history(previous, shown, selection.inspirations, context.language, rng)
        user = self.texts.render(
            template,
            rng if self.config.use_template_stochasticity else None,
            metrics=self._metrics(parent.metrics),
            fitness_score=_fmt(fitness(parent.metrics, self.dimensions)),
            feature_coords=self._coordinates(parent.metrics),
            feature_dimensions=", ".join(self.dimensions) if self.dimensions else "None",
            improvement_areas=self._focus(parent, previous),
            evolution_history=history,
            current_program=parent.code.rstrip("\n"),
            language=context.language,
            artifacts=self._artifacts(parent.artifacts),
            task_description=self._task(context),
            failed_attempts=self._failures(context),
        )
        return Prompt(system=self.system_message(), user=user.strip() + "\n", kind=kind)

    # -- sections -------------------------------------------------------------------------------
    def _task(self, context: PromptContext) -> str:
        parts = []
        if context.task_description:
            title = self.texts.fragment("task_description_title")
            parts.append(f"# {title}\n{context.task_description.strip()}\n\n")
        if context.memory:
            parts.append(f"# {self.texts.fragment('guidance_title')}\n{context.memory.strip()}\n\n")
        return "".join(parts)

    def _failures(self, context: PromptContext) -> str:
        if not context.attempts:
            return ""
        lines = [f"- Attempt {a.index + 1}: {a.error[-800:]}" for a in context.attempts]
        return f"\n# {self.texts.fragment('failed_attempts_title')}\n" + "\n".join(lines) + "\n"

    @staticmethod
    def _metrics(metrics: Mapping[str, Any]) -> str:
        return "\n".join(f"- {name}: {_fmt(value)}" for name, value in metrics.items())

    def _coordinates(self, metrics: Mapping[str, Any]) -> str:
        parts = []
        for dim in self.dimensions:
            if dim in metrics:
                value = metrics[dim]
                if isinstance(value, (int, float)) and not math.isnan(float(value)):
                    parts.append(f"{dim}={float(value):.2f}")
                elif not isinstance(value, (int, float)):
                    parts.append(f"{dim}={value}")
        return ", ".join(parts)

    def _focus(self, parent: Program, previous: Sequence[Program]) -> str:
        texts = self.texts
        areas = []
        current = fitness(parent.metrics, self.dimensions)
        if previous:
            before = fitness(previous[-1].metrics, self.dimensions)
            if current > before:
                areas.append(texts.fragment("fitness_improved", prev=before, current=current))
            elif current < before:
                areas.append(texts.fragment("fitness_declined", prev=before, current=current))
            else:
                areas.append(texts.fragment("fitness_stable", current=current))
        if self.dimensions:
            coords = self._coordinates(parent.metrics)
            areas.append(
                texts.fragment("exploring_region", features=coords)
                if coords
                else texts.fragment("no_feature_coordinates")
            )
        limit = self.config.suggest_simplification_after_chars
        if limit and len(parent.code) > limit:
            areas.append(texts.fragment("code_too_long", threshold=limit))
        if not areas:
            areas.append(texts.fragment("no_specific_guidance"))
        return "\n".join(f"- {area}" for area in areas)

    def _artifacts(self, artifacts: Mapping[str, Any]) -> str:
        if not self.config.include_artifacts or not artifacts:
            return ""
        sections = []
        for key, value in artifacts.items():
            text = value if isinstance(value, str) else str(value)
            if self.config.artifact_security_filter:
                text = _ANSI.sub("", text)
                for pattern, replacement in _REDACT:
                    text = pattern.sub(replacement, text)
            limit = self.config.max_artifact_bytes
            if len(text) > limit:
                text = text[:limit] + "\n... (truncated)"
            sections.append(f"### {key}\n```\n{text}\n```")
        return f"## {self.texts.fragment('artifact_title')}\n\n" + "\n\n".join(sections)

    def _history(
        self,
        previous: Sequence[Program],
        shown: Sequence[Program],
        inspirations: Sequence[Program],
        language: str,
        rng: random.Random,
    ) -> str:
        texts = self.texts
        attempts = "".join(
            self._section("previous", number, program, language)
            for number, program in self._previous(previous)
        )
        top = shown[: self.num_top]
        programs = "".join(self._section("top", i, p, language) for i, p in enumerate(top))
        diverse: list[Program] = []
        if self.num_diverse > 0 and len(shown) > self.num_top:
            pool = list(shown[self.num_top :])
            diverse = rng.sample(pool, min(self.num_diverse, len(pool)))
            programs += f"\n\n## {texts.fragment('diverse_programs_title')}\n\n"
            programs += "".join(
                self._section("diverse", i, p, language) for i, p in enumerate(diverse)
            )
        seen = {p.id for p in top} | {p.id for p in diverse}
        kept = [p for p in inspirations if p.id not in seen]
        section = ""
        if kept:
            body = "".join(self._section("inspiration", i, p, language) for i, p in enumerate(kept))
            section = texts.render("inspirations_section", inspiration_programs=body.strip())
        return texts.render(
            "evolution_history",
            previous_attempts=attempts.strip(),
            top_programs=programs.strip(),
            inspirations_section=section,
        )

    def _section(self, kind: str, number: int, program: Program, language: str) -> str:
        """One program's section of the history: a previous attempt (``number``: its attempt
        number), a top or diverse program or an inspiration (``number``: its place, from 0).
        Its text depends on these alone (the texts are fixed, a program never changes), and an
        island's top programs come back prompt after prompt: it is remembered."""
        key = (kind, number, language, program.id)
        kept = self._sections.get(key)
        if kept is not None and kept[0] is program:
            return kept[1]
        if kind == "previous":
            text = self.texts.render("previous_attempt", **self._attempt(program, number))
            text += "\n\n"
        elif kind == "top":
            features = self._top_features(program)
            text = self._shown("top_program", str(number + 1), program, features, language)
        elif kind == "diverse":
            features = self._diverse_features(program)
            text = self._shown("top_program", f"D{number + 1}", program, features, language)
        else:
            text = self._inspiration(number + 1, program, language)
        if len(self._sections) >= SECTIONS_KEPT:
            self._sections.clear()
        self._sections[key] = (program, text)
        return text

    def _previous(self, previous: Sequence[Program]) -> list[tuple[int, Program]]:
        """The previous attempts shown: (attempt number, program), the latest first."""
        chosen = list(previous[-min(3, len(previous)) :]) if previous else []
        return [(len(previous) - i, program) for i, program in enumerate(reversed(chosen))]

    def _attempt(self, program: Program, number: int) -> dict[str, Any]:
        """The ``previous_attempt`` template's fields for ``program``, attempt ``number``."""
        texts = self.texts
        parent_metrics = program.metadata.get("parent_metrics") or {}
        up, down = [], []
        for name, value in program.metrics.items():
            before = parent_metrics.get(name, 0)
            if isinstance(value, (int, float)) and isinstance(before, (int, float)):
                up.append(value > before)
                down.append(value < before)
        if up and all(up):
            outcome = texts.fragment("attempt_all_metrics_improved")
        elif down and all(down):
            outcome = texts.fragment("attempt_all_metrics_regressed")
        else:
            outcome = texts.fragment("attempt_mixed_metrics")
        changes = (
            program.changes
            or program.metadata.get("changes")
            or texts.fragment("attempt_unknown_changes")
        )
        return {
            "attempt_number": number,
            "changes": changes,
            "performance": ", ".join(f"{k}: {_fmt(v)}" for k, v in program.metrics.items()),
            "outcome": outcome,
        }

    def _top_features(self, program: Program) -> str:
        prefix = self.texts.fragment("top_program_metrics_prefix")
        return ", ".join(f"{prefix} {k} ({_fmt(v)})" for k, v in program.metrics.items())

    def _diverse_features(self, program: Program) -> str:
        prefix = self.texts.fragment("diverse_program_metrics_prefix")
        return ", ".join(f"{prefix} {name}" for name in list(program.metrics)[:2])

    def _shown(
        self, template: str, number: str, program: Program, features: str, language: str
    ) -> str:
        return (
            self.texts.render(
                template,
                program_number=number,
                score=_fmt(fitness(program.metrics, self.dimensions)),
                language=language,
                program_snippet=program.code.rstrip("\n"),
                key_features=features,
            )
            + "\n\n"
        )

    def _inspiration(self, number: int, program: Program, language: str) -> str:
        return (
            self.texts.render(
                "inspiration_program",
                program_number=number,
                score=_fmt(fitness(program.metrics, self.dimensions)),
                program_type=self._kind(program),
                language=language,
                program_snippet=program.code.rstrip("\n"),
                unique_features=self._unique(program),
            )
            + "\n\n"
        )

    def _kind(self, program: Program) -> str:
        meta = program.metadata
        texts = self.texts
        if meta.get("diverse"):
            return texts.fragment("inspiration_type_diverse")
        if meta.get("migrant"):
            return texts.fragment("inspiration_type_migrant")
        if meta.get("random"):
            return texts.fragment("inspiration_type_random")
        score = fitness(program.metrics, self.dimensions)
        if score >= 0.8:
            return texts.fragment("inspiration_type_score_high_performer")
        if score >= 0.6:
            return texts.fragment("inspiration_type_score_alternative")
        if score >= 0.4:
            return texts.fragment("inspiration_type_score_experimental")
        return texts.fragment("inspiration_type_score_exploratory")

    def _unique(self, program: Program) -> str:
        cfg, texts = self.config, self.texts
        features = []
        changes = program.changes or program.metadata.get("changes")
        if isinstance(changes, str) and cfg.include_changes_under_chars:
            if len(changes) < cfg.include_changes_under_chars:
                features.append(texts.fragment("inspiration_changes_prefix", changes=changes))
        for name, value in program.metrics.items():
            if isinstance(value, (int, float)):
                if value >= 0.9:
                    features.append(
                        texts.fragment(
                            "inspiration_metrics_excellent", metric_name=name, value=value
                        )
                    )
                elif value <= 0.3:
                    features.append(
                        texts.fragment("inspiration_metrics_alternative", metric_name=name)
                    )
        code = program.code.lower()
        if code:
            if "class" in code and "def __init__" in code:
                features.append(texts.fragment("inspiration_code_with_class"))
            if "numpy" in code or "np." in code:
                features.append(texts.fragment("inspiration_code_with_numpy"))
            if "for" in code and "while" in code:
                features.append(texts.fragment("inspiration_code_with_mixed_iteration"))
            lines = len(program.code.split("\n"))
            if (
                cfg.concise_implementation_max_lines
                and lines <= cfg.concise_implementation_max_lines
            ):
                features.append(texts.fragment("inspiration_code_with_concise_line"))
            elif (
                cfg.comprehensive_implementation_min_lines
                and lines >= cfg.comprehensive_implementation_min_lines
            ):
                features.append(texts.fragment("inspiration_code_with_comprehensive_line"))
        if not features:
            kind = self._kind(program)
            features.append(texts.fragment("inspiration_no_features_postfix", program_type=kind))
        return ", ".join(features[: self.num_top])


def _program_rank(program: Program) -> float:
    return _rank_score(program.metrics)


def _rank_score(metrics: Mapping[str, Any]) -> float:
    value = metrics.get("combined_score")
    if value is None:
        return numeric_mean(metrics)
    try:
        return float(value)
    except (TypeError, ValueError):
        return numeric_mean(metrics)


@block(
    "openevolve_template",
    "OpenEvolve's prompt, diff or full rewrite as the proposer expects: fitness, feature "
    "coordinates and focus areas, the parent's execution output, previous attempts, top, diverse "
    "and inspiration programs of its island, the current program; a folder's template_dir "
    "templates replace ours.",
)
def openevolve_template(
    config: OpenEvolvePromptConfig,
    *,
    population: MapElitesIslandsPopulation,
    selection_policy: ThreeTierPolicy,
    proposer: BaseProposer,
) -> OpenEvolvePromptBuilder:
    """The card keeps the prompt's sizes under ``selection_policy``: ``num_inspirations``
    doubles as its ``num_top_programs``, ``num_diverse`` is its ``num_diverse_programs``; full
    rewrites when the proposer expects whole programs (``diff_based_evolution: false``)."""
    return OpenEvolvePromptBuilder(
        config,
        population,
        num_top=selection_policy.config.num_inspirations,
        num_diverse=selection_policy.config.num_diverse,
        diff_mode=proposer.response_kind != "rewrite",
        context=selection_policy,
    )
