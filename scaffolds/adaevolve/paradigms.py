"""The paradigm texts: the guide model's request, the parser of its answer, and the block a
paradigm adds to a mutation prompt.

The request shows the task as the guide may see it (``TaskInfo.model_context``: the
description and the evaluator's visible parts), the global best program and its score, the
ideas tried before with their outcome, and asks for JSON ``{"ideas": [...]}`` whose items carry
``idea``, ``description``, ``what_to_optimize``, ``cautions`` and ``approach_type``.  The parser
accepts the object, a bare list, or either inside a fenced block; an item needs ``idea``,
``description`` and ``approach_type`` (the reference's rule), the others get defaults.
"""

from __future__ import annotations

import json
import re
from typing import Any

from harness.core.records import Program, Prompt, TaskInfo
from harness.diffs import fenced

__all__ = ["format_guidance", "paradigm_prompt", "parse_ideas"]

FIELDS = ("idea", "description", "what_to_optimize", "cautions", "approach_type")
REQUIRED = ("idea", "description", "approach_type")
MAX_PROGRAM_CHARS = 20000
MAX_FIELD_CHARS = 2000
#: The request's title, written for the model that reads it (the guide model answers by the
#: call's purpose, ``paradigm``, sent as request metadata; no model needs this line to route).
TITLE = "# AdaEvolve paradigm request"


def paradigm_prompt(
    best: Program, best_score: float, tried: list[str], task: TaskInfo, count: int
) -> Prompt:
    system = (
        f"{TITLE}\n\n"
        "You advise an evolutionary program search that has stopped improving. "
        "Propose fundamentally different approaches (algorithms, formulations, libraries) that "
        "could move the best program past its plateau, not small tweaks. Describe strategies "
        "in words; do not write code or diffs."
    )
    context = (task.model_context or task.description).strip() or "(no description)"
    tried_text = "\n".join(f"- {t}" for t in tried) or "(none yet)"
    code = best.code[:MAX_PROGRAM_CHARS]
    user = (
        f"# Problem\n{context}\n\n"
        f"# Best program so far (score {best_score:.6g})\n{fenced(code, best.language)}\n\n"
        f"# Ideas tried before (outcome: approach - idea)\n{tried_text}\n\n"
        "Do not repeat a failed idea; a successful one may be developed further.\n\n"
        "# Answer format\n"
        f"Answer with one JSON object holding {count} ideas of different approach types:\n"
        '{"ideas": [{"idea": "<the technique, named>", "description": "<how to implement '
        'it, 5-10 sentences>", "what_to_optimize": "<the metric or part to focus on>", '
        '"cautions": "<pitfalls>", "approach_type": "<library.function or technique family>"}]}\n'
        "No other text."
    )
    return Prompt(system=system, user=user, kind="paradigm")


def _candidates(text: str) -> list[str]:
    out = [text.strip()]
    out += [m.group(1).strip() for m in re.finditer(r"```[a-zA-Z]*\n(.*?)```", text, re.S)]
    for opener in ("{", "["):
        start = text.find(opener)
        if start != -1:
            out.append(text[start:])
    return out


def _decode(candidate: str) -> Any:
    try:
        return json.JSONDecoder().raw_decode(candidate)[0]
    except (json.JSONDecodeError, ValueError):
        return None


def parse_ideas(text: str) -> list[dict[str, str]]:
    """The valid ideas of a guide answer, in order ([] when there is none)."""
    for candidate in _candidates(text):
        parsed = _decode(candidate)
        if isinstance(parsed, dict):
            parsed = parsed.get("ideas")
        if not isinstance(parsed, list):
            continue
        ideas = []
        for item in parsed:
            if not isinstance(item, dict) or not all(k in item for k in REQUIRED):
                continue
            idea = {k: str(item.get(k, ""))[:MAX_FIELD_CHARS] for k in FIELDS}
            idea["what_to_optimize"] = idea["what_to_optimize"] or "score"
            idea["approach_type"] = idea["approach_type"] or "unknown"
            ideas.append(idea)
        if ideas:
            return ideas
    return []


def format_guidance(paradigm: dict[str, str]) -> str:
    """The prompt block of an active paradigm (no code fences: the current program must stay
    the prompt's last fenced block)."""
    text = (
        "## Breakthrough idea: implement it\n"
        "The search has stalled globally; this iteration must try the following idea.\n\n"
        f"Idea: {paradigm.get('idea', '')}\n\n"
        f"How to implement it:\n{paradigm.get('description', '')}\n\n"
        f"Focus: {paradigm.get('what_to_optimize', 'score')}\n"
        f"Cautions: {paradigm.get('cautions', '')}\n"
        f"Approach type: {paradigm.get('approach_type', '')}\n\n"
        "Really use the idea in the code (not only in comments), keep the program correct and "
        "its output in the format the evaluator expects."
    )
    return text.replace("```", "'''")
