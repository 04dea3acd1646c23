"""The offline model's answers to EvoX guide prompts (purpose ``guide``: variation operators,
population insight, problem summary, strategy outcomes): well-formed, deterministic texts built
from the prompt.

Not an LLM: the operator examples are fixed templates naming the problem's first words; the
insight repeats the statistics' numeric lines as bullets; the summary is the problem's first
sentences; the outcomes quote each strategy's first recorded change.  Enough for the whole
guide path (parsing, fallbacks, storage, prompts) to run offline and in tests.
"""

from __future__ import annotations

import re

from harness.llm.offline.responders import (
    OfflineRequest,
    Responder,
    ResponseContext,
    for_purpose,
)

__all__ = ["guide_responder"]

#: Which of the four questions a guide call asks, read from the prompt's heading as any reader
#: would (the texts of ``scaffolds.evox.guide``, not imported: the model must not need
#: scaffolds.evox).  The call reaches this responder by its purpose, not by these texts.
OPERATORS = "# EvoX variation operators"
INSIGHT = "# EvoX population insight"
SUMMARY = "# EvoX problem summary"
OUTCOMES = "# EvoX strategy outcomes"
HEADER = "[galapagos offline model: templated guide text, not an LLM]"

_DIVERGE = (
    "replace the core construction of {topic} with a different algorithm family",
    "reformulate {topic} as an optimisation over different variables",
    "start from a structured (symmetric or greedy) construction instead of the current one",
    "combine two different heuristics for {topic} and keep the better result",
)
_REFINE = (
    "tune the constants the current approach for {topic} relies on",
    "add a local polishing step after the main construction",
    "spend more of the time budget on the stage that improves the score most",
    "tighten numerical tolerances while keeping every result valid",
)


def _section(text: str, heading: str) -> str:
    match = re.search(rf"^{re.escape(heading)}\s*$\n(.*?)(?=^# |\Z)", text, re.M | re.S)
    return match.group(1).strip() if match else ""


def _topic(text: str) -> str:
    problem = _section(text, "# Problem") or text
    words = re.findall(r"[A-Za-z][A-Za-z0-9_-]*", problem)[:6]
    return " ".join(words) or "the problem"


def _answer(request: OfflineRequest, ctx: ResponseContext) -> str:
    text = request.text
    user = request.last_user
    if OPERATORS in text:
        topic = _topic(user)
        diverge = ctx.rng.sample(_DIVERGE, 3)
        refine = ctx.rng.sample(_REFINE, 3)
        return (
            f"{HEADER}\n## DIVERGE\n"
            + "\n".join(f"- {d.format(topic=topic)}" for d in diverge)
            + "\n## REFINE\n"
            + "\n".join(f"- {r.format(topic=topic)}" for r in refine)
            + "\n"
        )
    if INSIGHT in text:
        lines = [ln.strip() for ln in user.splitlines() if re.search(r"\d", ln)]
        bullets = [f"- {ln.lstrip('-* ')}" for ln in lines[:8]] or ["- no statistics given"]
        return f"{HEADER}\n" + "\n".join(bullets) + "\n"
    if SUMMARY in text:
        problem = _section(user, "# Problem") or user
        words = problem.split()[:80]
        return f"{HEADER}\n" + " ".join(words) + "\n"
    sections = re.findall(r"^## Strategy (\S+)\s*$\n(.*?)(?=^## Strategy |\Z)", user, re.M | re.S)
    parts = []
    for sid, body in sections:
        first = next((ln.strip() for ln in body.splitlines() if ln.strip()), "no change recorded")
        parts.append(f"## Strategy {sid}\nWhile active: {first}")
    return f"{HEADER}\n" + "\n\n".join(parts) + "\n"


def guide_responder() -> Responder:
    return Responder("evox_guide", for_purpose("guide"), _answer)
