"""``openevolve_template``: OpenEvolve 0.4.0's diff prompt (``PromptSampler.build_prompt`` with
its ``diff_user`` template, as its parallel worker calls it).

Sections, in order: current program information (fitness, feature coordinates, focus areas),
the parent's execution output, the evolution history (previous attempts, top programs, diverse
programs, inspirations), the current program, and the SEARCH/REPLACE task.  What the reference
feeds it:

- The context comes from the *parent's* island, ranked by ``combined_score`` (else the metric
  mean): the first ``num_top`` are the previous attempts and the top programs, the next
  ``num_diverse`` the pool the diverse programs are drawn from.
- Previous attempts are listed worst first (numbered down to 1); an attempt's outcome compares
  every numeric metric with its parent's.
- Inspirations already shown as top or diverse programs are left out (openevolve#452).
- Feature coordinates are the dimensions the evaluator reports as metrics; built-in ones
  (complexity, diversity) are not metrics, so the line says there are none, as the reference's.

The reference draws the diverse programs from the global ``random``; here the draw is seeded
by the iteration and the parent, so a prompt is a pure function of its inputs.  The wording is
ours; the structure, headings and numbers are the reference's.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import Field

from harness.components.prompt import DefaultPromptBuilder, template_env
from harness.core.prompt import BasePromptBuilder, PromptContext
from harness.core.records import Program, Prompt, Selection
from harness.core.validation import StrictModel
from scaffolds.openevolve.features import fitness, numeric_mean
from scaffolds.openevolve.population import MapElitesIslandsPopulation

__all__ = ["OpenEvolvePromptBuilder", "OpenEvolvePromptConfig"]

TEMPLATES = Path(__file__).with_name("templates")
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


def _fmt(value: Any, digits: int = 4) -> str:
    if isinstance(value, (int, float)):
        try:
            return f"{value:.{digits}f}"
        except (TypeError, ValueError):
            return str(value)
    return str(value)


class OpenEvolvePromptBuilder(BasePromptBuilder):
    def __init__(
        self,
        config: OpenEvolvePromptConfig,
        population: MapElitesIslandsPopulation,
        *,
        num_top: int = 3,
        num_diverse: int = 2,
    ) -> None:
        self.config = config
        self.population = population
        self.num_top = num_top
        self.num_diverse = num_diverse
        self.dimensions = list(population.config.feature_dimensions)
        self._env = template_env(TEMPLATES)  # sandboxed, as every prompt template
        self._scratch = DefaultPromptBuilder()

    def system_message(self) -> str:
        if self.config.system_message is not None:
            return self.config.system_message
        return self._env.get_template("system.j2").render().strip()

    def build(self, selection: Selection, context: PromptContext) -> Prompt:
        parent = selection.parent
        if parent is None:  # from scratch: ask for a whole program, as the default builder does
            scratch = self._scratch.build(selection, context)
            return Prompt(system=self.system_message(), user=scratch.user, kind=scratch.kind)
        island = self.population.island_of(parent.id) or 0
        ranked = sorted(
            self.population.island_members(island),
            key=lambda p: _rank_score(p.metrics),
            reverse=True,
        )
        shown = ranked[: self.num_top + self.num_diverse]
        previous = ranked[: self.num_top]
        top = shown[: self.num_top]
        diverse: list[Program] = []
        if self.num_diverse > 0 and len(shown) > self.num_top:
            pool = shown[self.num_top :]
            draw = random.Random(f"{context.iteration}:{parent.id}")
            diverse = draw.sample(pool, min(self.num_diverse, len(pool)))
        seen = {p.id for p in top} | {p.id for p in diverse}
        inspirations = [p for p in selection.inspirations if p.id not in seen]
        user = self._env.get_template("diff_user.j2").render(
            task=context.task_description,
            memory=context.memory,
            fitness=_fmt(fitness(parent.metrics, self.dimensions)),
            coordinates=self._coordinates(parent.metrics),
            focus=self._focus(parent, previous),
            artifacts=self._artifacts(parent.artifacts),
            previous=self._previous(previous),
            top=[self._top(i + 1, p) for i, p in enumerate(top)],
            diverse=[self._diverse(i + 1, p) for i, p in enumerate(diverse)],
            inspirations=[self._inspiration(i + 1, p) for i, p in enumerate(inspirations)],
            failures=[{"index": a.index + 1, "error": a.error[-800:]} for a in context.attempts],
            dimensions=", ".join(self.dimensions) if self.dimensions else "None",
            code=parent.code.rstrip("\n"),
            language=context.language,
        )
        return Prompt(system=self.system_message(), user=user.strip() + "\n", kind="diff")

    # -- sections -------------------------------------------------------------------------------
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
        areas = []
        current = fitness(parent.metrics, self.dimensions)
        if previous:
            before = fitness(previous[-1].metrics, self.dimensions)
            if current > before:
                areas.append(f"Fitness went up: {before:.4f} → {current:.4f}")
            elif current < before:
                areas.append(
                    f"Fitness went down: {before:.4f} → {current:.4f}; reconsider the recent "
                    "changes"
                )
            else:
                areas.append(f"Fitness is unchanged at {current:.4f}")
        if self.dimensions:
            coords = self._coordinates(parent.metrics)
            areas.append(f"Exploring the {coords} region" if coords else "No feature coordinates")
        limit = self.config.suggest_simplification_after_chars
        if limit and len(parent.code) > limit:
            areas.append(f"The program is over {limit} characters: consider simplifying it")
        if not areas:
            areas.append("Improve the fitness while keeping the programs diverse")
        return "\n".join(f"- {area}" for area in areas)

    def _artifacts(self, artifacts: Mapping[str, Any]) -> list[tuple[str, str]]:
        if not self.config.include_artifacts:
            return []
        out = []
        for key, value in artifacts.items():
            text = value if isinstance(value, str) else str(value)
            if self.config.artifact_security_filter:
                text = _ANSI.sub("", text)
                for pattern, replacement in _REDACT:
                    text = pattern.sub(replacement, text)
            limit = self.config.max_artifact_bytes
            if len(text) > limit:
                text = text[:limit] + "\n... (truncated)"
            out.append((str(key), text))
        return out

    def _previous(self, previous: Sequence[Program]) -> list[dict[str, Any]]:
        chosen = list(previous[-min(3, len(previous)) :]) if previous else []
        out = []
        for i, program in enumerate(reversed(chosen)):
            parent_metrics = program.metadata.get("parent_metrics") or {}
            up, down = [], []
            for name, value in program.metrics.items():
                before = parent_metrics.get(name, 0)
                if isinstance(value, (int, float)) and isinstance(before, (int, float)):
                    up.append(value > before)
                    down.append(value < before)
            if up and all(up):
                outcome = "Improvement in all metrics"
            elif down and all(down):
                outcome = "Regression in all metrics"
            else:
                outcome = "Mixed results"
            out.append(
                {
                    "number": len(previous) - i,
                    "changes": program.changes
                    or program.metadata.get("changes")
                    or "Unknown changes",
                    "metrics": ", ".join(f"{k}: {_fmt(v)}" for k, v in program.metrics.items()),
                    "outcome": outcome,
                }
            )
        return out

    def _top(self, number: int, program: Program) -> dict[str, Any]:
        features = ", ".join(
            f"Performs well on {k} ({_fmt(v)})" for k, v in program.metrics.items()
        )
        return self._shown(str(number), program, features)

    def _diverse(self, number: int, program: Program) -> dict[str, Any]:
        names = list(program.metrics)[:2]
        features = ", ".join(f"Alternative approach to {name}" for name in names)
        return self._shown(f"D{number}", program, features)

    def _shown(self, number: str, program: Program, features: str) -> dict[str, Any]:
        return {
            "number": number,
            "score": _fmt(fitness(program.metrics, self.dimensions)),
            "code": program.code.rstrip("\n"),
            "features": features,
        }

    def _inspiration(self, number: int, program: Program) -> dict[str, Any]:
        return {
            "number": number,
            "score": _fmt(fitness(program.metrics, self.dimensions)),
            "kind": self._kind(program),
            "code": program.code.rstrip("\n"),
            "features": self._unique(program),
        }

    def _kind(self, program: Program) -> str:
        meta = program.metadata
        if meta.get("diverse"):
            return "Diverse"
        if meta.get("migrant"):
            return "Migrant"
        if meta.get("random"):
            return "Random"
        score = fitness(program.metrics, self.dimensions)
        if score >= 0.8:
            return "High-Performer"
        if score >= 0.6:
            return "Alternative"
        if score >= 0.4:
            return "Experimental"
        return "Exploratory"

    def _unique(self, program: Program) -> str:
        cfg = self.config
        features = []
        changes = program.changes or program.metadata.get("changes")
        if isinstance(changes, str) and cfg.include_changes_under_chars:
            if len(changes) < cfg.include_changes_under_chars:
                features.append(f"Modification: {changes}")
        for name, value in program.metrics.items():
            if isinstance(value, (int, float)):
                if value >= 0.9:
                    features.append(f"Excellent {name} ({value:.3f})")
                elif value <= 0.3:
                    features.append(f"Alternative {name} approach")
        code = program.code.lower()
        if code:
            if "class" in code and "def __init__" in code:
                features.append("Object-oriented approach")
            if "numpy" in code or "np." in code:
                features.append("NumPy-based implementation")
            if "for" in code and "while" in code:
                features.append("Mixed iteration strategies")
            lines = len(program.code.split("\n"))
            if (
                cfg.concise_implementation_max_lines
                and lines <= cfg.concise_implementation_max_lines
            ):
                features.append("Concise implementation")
            elif (
                cfg.comprehensive_implementation_min_lines
                and lines >= cfg.comprehensive_implementation_min_lines
            ):
                features.append("Comprehensive implementation")
        if not features:
            features.append(f"{self._kind(program)} approach to the problem")
        return ", ".join(features[: self.num_top])


def _rank_score(metrics: Mapping[str, Any]) -> float:
    value = metrics.get("combined_score")
    if value is None:
        return numeric_mean(metrics)
    try:
        return float(value)
    except (TypeError, ValueError):
        return numeric_mean(metrics)
