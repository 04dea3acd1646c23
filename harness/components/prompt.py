"""``DefaultPromptBuilder``: task → metrics → feedback → previous attempts → inspirations →
current program last (in the final fenced block, where diff proposers and the offline model look).

Templates are jinja2 files in ``templates/``; a scaffold may pass its own directory.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jinja2
from pydantic import Field

from harness.components.diff import fenced
from harness.core.prompt import BasePromptBuilder, PromptContext
from harness.core.records import Program, Prompt, Selection
from harness.core.validation import StrictModel

__all__ = ["DefaultPromptBuilder", "DefaultPromptConfig", "format_value"]

TEMPLATES = Path(__file__).with_name("templates")


class DefaultPromptConfig(StrictModel):
    #: Replaces the default system message.
    system_message: str | None = None
    #: ``true``: ask for SEARCH/REPLACE edits; ``false``: ask for a full rewrite.
    diff_mode: bool = True
    #: Characters of the parent's evaluation feedback shown.
    max_feedback_chars: int = Field(2000, ge=0)
    #: Characters of a failed attempt's code / traceback shown.
    max_failed_code_chars: int = Field(1500, ge=0)
    max_traceback_chars: int = Field(800, ge=0)
    #: Directory with ``system.j2``/``user.j2``/``scratch.j2`` overriding the defaults.  Fence
    #: code with the ``fenced`` filter (``{{ code | fenced(language) }}``), never fixed backticks.
    template_dir: str | None = None


def format_value(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return str(value)
    f = float(value)
    if math.isfinite(f) and f == int(f) and abs(f) < 1e15 and isinstance(value, numbers.Integral):
        return str(int(f))
    return f"{f:.6g}"


def _tail(text: str, limit: int) -> str:
    return text if len(text) <= limit else "…" + text[-limit:]


def _head(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "\n…"


class DefaultPromptBuilder(BasePromptBuilder):
    def __init__(self, config: DefaultPromptConfig | None = None) -> None:
        self.config = config or DefaultPromptConfig()
        dirs = [str(TEMPLATES)]
        if self.config.template_dir:
            dirs.insert(0, self.config.template_dir)
        self._env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(dirs),
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
            autoescape=False,  # noqa: S701 - plain-text prompts, not HTML
        )
        # ``{{ code | fenced(language) }}``: a fence longer than any backtick line in the code.
        self._env.filters["fenced"] = fenced

    def system_message(self) -> str:
        if self.config.system_message is not None:
            return self.config.system_message
        return self._env.get_template("system.j2").render().strip()

    def build(self, selection: Selection, context: PromptContext) -> Prompt:
        cfg = self.config
        failures = [
            {
                "index": a.index + 1,
                "stage": a.stage,
                "error": _tail(a.error, cfg.max_traceback_chars),
                "traceback": _tail(a.traceback, cfg.max_traceback_chars) if a.traceback else "",
                "code": _head(a.code, cfg.max_failed_code_chars) if a.code else "",
            }
            for a in context.attempts
        ]
        parent = selection.parent
        if parent is None:
            user = self._env.get_template("scratch.j2").render(
                task=context.task_description,
                memory=context.memory,
                failures=failures,
                language=context.language,
            )
            return Prompt(system=self.system_message(), user=user.strip() + "\n", kind="rewrite")
        labels = list(selection.inspiration_labels) or [""] * len(selection.inspirations)
        user = self._env.get_template("user.j2").render(
            task=context.task_description,
            memory=context.memory,
            metrics=self._metrics(parent.metrics),
            feedback=self._feedback(parent),
            history=[self._history_item(p) for p in context.history],
            failures=failures,
            inspirations=[
                {
                    "label": label or "Context program",
                    "id": p.id,
                    "score": format_value(p.score),
                    "code": p.code.rstrip("\n"),
                }
                for p, label in zip(selection.inspirations, labels, strict=False)
            ],
            rewrite=not cfg.diff_mode,
            evolve_block="EVOLVE-BLOCK-START" in parent.code,
            timeout=format_value(context.eval_timeout_s) if context.eval_timeout_s else "",
            parent_label=selection.parent_label,
            code=parent.code.rstrip("\n"),
            language=context.language,
        )
        kind = "diff" if cfg.diff_mode else "rewrite"
        return Prompt(system=self.system_message(), user=user.strip() + "\n", kind=kind)

    @staticmethod
    def _metrics(metrics: Mapping[str, Any]) -> list[tuple[str, str]]:
        return [(k, format_value(v)) for k, v in metrics.items() if k != "error"]

    def _feedback(self, parent: Program) -> str:
        parts = [f"{k}: {v}" for k, v in parent.artifacts.items() if v]
        return _tail("\n".join(parts), self.config.max_feedback_chars) if parts else ""

    @staticmethod
    def _history_item(program: Program) -> dict[str, str]:
        parent_score = program.metadata.get("parent_score")
        if parent_score is None:
            outcome = "no parent"
        elif program.score > parent_score:
            outcome = "improvement"
        elif program.score < parent_score:
            outcome = "regression"
        else:
            outcome = "no change"
        return {
            "id": program.id,
            "score": format_value(program.score),
            "outcome": outcome,
            "changes": program.changes or "(not recorded)",
        }
