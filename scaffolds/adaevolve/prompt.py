"""``AdaEvolvePromptBuilder``: the AdaEvolve mutation prompt.

Sections in the reference's order: the parent's metrics and focus areas, previous attempts
(the shared rule, :func:`harness.components.prompt.previous_attempts`), the context programs,
the current program (with its EXPLORE/EXPLOIT label), then the *search guidance*:

1. the evaluator's feedback on the parent (``artifacts["feedback"]``, first 2000 characters);
2. the active paradigm (the memory's text, one use per prompt);
3. siblings: the parent's last 5 children on the sampled island, each marked improved /
   unchanged / regressed (±0.001);
4. the previous attempt's error when this is a retry.

Then the task objective and the SEARCH/REPLACE instructions (plain text, no fence: the current
program stays the last fenced block).
"""

from __future__ import annotations

from pydantic import Field

from harness.components.prompt import format_value, outcome, previous_attempts, tail
from harness.core.blocks import block
from harness.core.prompt import BasePromptBuilder, PromptContext
from harness.core.records import Program, Prompt, Selection
from harness.core.validation import StrictModel
from harness.diffs import fenced
from scaffolds.adaevolve.archive import proxy_fitness
from scaffolds.adaevolve.population import AdaEvolveArchipelago

__all__ = ["AdaEvolvePromptBuilder", "AdaEvolvePromptConfig"]

SYSTEM = (
    "You are an expert programmer improving a program through a sequence of evaluated edits. "
    "An automatic evaluator runs every proposal and recomputes its score; only real "
    "improvements count. Keep the program correct, deterministic and within its time limit."
)
SIBLINGS = 5


class AdaEvolvePromptConfig(StrictModel):
    system_message: str | None = None
    max_feedback_chars: int = Field(2000, ge=0)
    max_error_chars: int = Field(2000, ge=0)


@block(
    "adaevolve",
    "AdaEvolve's diff prompt: search guidance (feedback, paradigm, siblings, retry error) after "
    "the current program, EXPLORE/EXPLOIT parent labels.",
)
class AdaEvolvePromptBuilder(BasePromptBuilder):
    def __init__(
        self, config: AdaEvolvePromptConfig, population: AdaEvolveArchipelago | None
    ) -> None:
        self.config = config
        self.population = population

    def build(self, selection: Selection, context: PromptContext) -> Prompt:
        system = self.config.system_message or SYSTEM
        parent = selection.parent
        language = context.language
        if parent is None:
            user = (
                f"# Task\n{context.task_description}\n\n"
                f"{self._retry(context)}\n\n"
                f"Write a complete program for this task in one ```{language} fenced block."
            )
            return Prompt(system=system, user=user.strip() + "\n", kind="rewrite")
        metrics = "\n".join(
            f"- {k}: {format_value(v)}" for k, v in parent.metrics.items() if k != "error"
        )
        history = "\n".join(
            f"## Program {p.id} (score {format_value(p.score)}, {outcome(p)} vs its parent)\n"
            f"Changes: {p.changes or '(not recorded)'}"
            for p in previous_attempts(context.population)
        )
        others = "\n".join(
            f"## Context program {p.id} (score {format_value(p.score)})\n{fenced(p.code, language)}"
            for p in selection.inspirations
        )
        label = f"{selection.parent_label}\n" if selection.parent_label else ""
        guidance = "\n\n".join(
            s
            for s in (
                self._feedback(parent),
                context.memory.strip(),
                self._siblings(selection, parent),
                self._retry(context),
            )
            if s
        )
        evolve = (
            "Only change code between the EVOLVE-BLOCK-START and EVOLVE-BLOCK-END markers.\n"
            if "EVOLVE-BLOCK-START" in parent.code
            else ""
        )
        timeout = (
            f"Each evaluation is limited to {format_value(context.eval_timeout_s)} seconds; a "
            "program that exceeds it fails.\n"
            if context.eval_timeout_s
            else ""
        )
        user = (
            f"# Task\n{context.task_description}\n\n"
            f"# Current solution\n- Metrics:\n{metrics or '(none)'}\n"
            f"- Focus: improve combined_score; keep the solution valid.\n\n"
            f"# Previous attempts\n{history or 'No previous attempts yet.'}\n\n"
            + (f"# Other context programs\n{others}\n\n" if others else "")
            + f"# Current program\n{label}{fenced(parent.code, language)}\n\n"
            + (f"{guidance}\n\n" if guidance else "")
            + "# Instructions\n"
            "Suggest improvements to the current program that raise its combined_score. "
            "Solutions that score alike but differ in approach are valuable too.\n"
            "Answer with one or more SEARCH/REPLACE blocks in exactly this format:\n\n"
            "<<<<<<< SEARCH\n(lines copied exactly from the current program)\n=======\n"
            "(the lines that replace them)\n>>>>>>> REPLACE\n\n"
            "Every SEARCH part must match whole lines of the current program character for "
            "character, indentation included. Explain your reasoning briefly.\n"
            f"{evolve}{timeout}"
        )
        return Prompt(system=system, user=user.strip() + "\n", kind="diff")

    def _feedback(self, parent: Program) -> str:
        feedback = parent.artifacts.get("feedback")
        if not isinstance(feedback, str) or not feedback:
            return ""
        limit = self.config.max_feedback_chars
        if len(feedback) > limit:
            feedback = feedback[:limit] + "\n... (truncated)"
        return (
            "## Evaluator feedback on the current program\n"
            "The evaluator's diagnosis of where the current program falls short; use it to "
            f"target your changes:\n\n{feedback.replace('```', chr(39) * 3)}"
        )

    def _siblings(self, selection: Selection, parent: Program) -> str:
        island = selection.tags.get("island")
        if self.population is None or not isinstance(island, int):
            return ""
        if island >= len(self.population.islands):
            return ""
        children = self.population.islands[island].children(parent.id)[-SIBLINGS:]
        if not children:
            return ""
        base = proxy_fitness(parent)
        counts = {"IMPROVED": 0, "NO CHANGE": 0, "REGRESSED": 0}
        lines = []
        for n, child in enumerate(children, 1):
            score = proxy_fitness(child)
            if base == float("-inf") or score == float("-inf"):
                lines.append(f"  {n}. (metrics unavailable) [UNKNOWN]")
                counts["NO CHANGE"] += 1
                continue
            delta = score - base
            status = "IMPROVED" if delta > 0.001 else "REGRESSED" if delta < -0.001 else "NO CHANGE"
            counts[status] += 1
            lines.append(f"  {n}. {base:.4f} -> {score:.4f} ({delta:+.4f}) [{status}]")
        return "\n".join(
            [
                "## Earlier edits of this parent",
                f"{counts['IMPROVED']} improved, {counts['NO CHANGE']} unchanged, "
                f"{counts['REGRESSED']} regressed:",
                *lines,
                "Do not repeat what did not work.",
            ]
        )

    def _retry(self, context: PromptContext) -> str:
        if not context.attempts:
            return ""
        error = tail(context.attempts[-1].error or "unknown error", self.config.max_error_chars)
        return (
            "## The previous attempt failed\n"
            f"Error: {error.replace('```', chr(39) * 3)}\n"
            "Avoid this problem in your new answer."
        )
