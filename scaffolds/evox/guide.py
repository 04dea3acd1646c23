"""EvoX's guide-LLM texts: problem-specific variation operators (once per run) and the insight
the strategy rewrite is conditioned on (per meta-generation).

As the reference (SkyDiscover ``search/evox``), with our own prompts:

- **Variation operators** (:func:`operators_prompt`): at run start the guide model writes what
  DIVERGE (a structurally different approach) and REFINE (local refinement) mean *for this
  problem*; the texts fill the generic labels' examples slot.  A failed or malformed answer
  leaves the generic texts (the reference leaves the labels empty).
- **Insight** (:func:`insight_prompts`), three calls per rewrite, concurrently: a number-backed
  reading of the population statistics, a short problem summary (cached by the hash of its
  input), and a summary of how the population changed under each earlier strategy.  A failed
  call degrades to the numbers (never to an empty section) and never fails the run.

The task context a guide model sees is ``TaskInfo.model_context`` (the description and the
evaluator's *public* parts: see :mod:`harness.evaluation.visible`); the reference sends the
whole evaluator source, which may hold hidden data.  Every call is an ordinary accounted LLM
call (purpose ``guide``) that counts against the run's budget.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from harness.core.errors import LLMError
from harness.core.llm import LLM
from harness.core.records import Prompt
from scaffolds.evox.history import StrategyRecord
from scaffolds.evox.records import Labels

__all__ = [
    "INSIGHT_MARKER",
    "OPERATORS_MARKER",
    "OUTCOMES_MARKER",
    "SUMMARY_MARKER",
    "Insight",
    "generate_operators",
    "gather_insight",
    "operators_prompt",
    "parse_operators",
]

OPERATORS_MARKER = "# EvoX variation operators"
INSIGHT_MARKER = "# EvoX population insight"
SUMMARY_MARKER = "# EvoX problem summary"
OUTCOMES_MARKER = "# EvoX strategy outcomes"
PURPOSE = "guide"
#: Longest accepted text per operator (a runaway answer is not injected into every prompt).
MAX_OPERATOR_CHARS = 1500
MAX_SUMMARY_CHARS = 1200
MAX_INSIGHT_CHARS = 2000

_SECTION = re.compile(r"^\s*#{1,3}\s*(DIVERGE|REFINE)\b.*$", re.M | re.I)


def operators_prompt(task_context: str) -> Prompt:
    system = (
        f"{OPERATORS_MARKER}\n\nYou help an evolutionary program search. Candidate programs are "
        "mutated by an LLM; two variation operators steer it: DIVERGE asks for a structurally "
        "different approach, REFINE asks to improve the current approach locally. Write, for "
        "the problem below, concrete examples of what each operator means: 3 to 5 short bullet "
        "points each, specific to this problem (algorithms, formulations, parameters), no code."
    )
    user = (
        "# Problem\n"
        f"{task_context.strip() or '(no description)'}\n\n"
        "# Answer format\n"
        "## DIVERGE\n- <a structurally different approach for this problem>\n...\n"
        "## REFINE\n- <a local refinement of a working approach>\n...\n"
    )
    return Prompt(system=system, user=user, kind="guide")


def parse_operators(text: str) -> tuple[str, str] | None:
    """``(diverge, refine)`` examples from an answer, or None when it lacks either section."""
    found: dict[str, str] = {}
    matches = list(_SECTION.finditer(text))
    for n, match in enumerate(matches):
        end = matches[n + 1].start() if n + 1 < len(matches) else len(text)
        body = text[match.end() : end].strip()
        key = match.group(1).upper()
        if body and key not in found:
            found[key] = body
    if set(found) != {"DIVERGE", "REFINE"}:
        return None
    if any(len(v) > MAX_OPERATOR_CHARS for v in found.values()):
        return None
    return found["DIVERGE"], found["REFINE"]


def with_examples(generic: Labels, diverge: str, refine: str) -> Labels:
    """The generic label texts with the problem-specific examples appended."""

    def join(base: str, examples: str) -> str:
        if not base:
            return ""
        return f"{base}\nIdeas for this problem:\n{examples}"

    return Labels(join(generic.diverge, diverge), join(generic.refine, refine))


@dataclass(frozen=True)
class OperatorsOutcome:
    labels: Labels
    #: ``generated``, or ``default`` (disabled / failed / malformed answer).
    source: str
    error: str = ""


async def generate_operators(llm: LLM, task_context: str, generic: Labels) -> OperatorsOutcome:
    """One guide call for the run's operator texts; the generic texts on any failure."""
    if not (generic.diverge or generic.refine):
        return OperatorsOutcome(generic, "default", "labels are disabled")
    try:
        call = await llm.generate(operators_prompt(task_context), purpose=PURPOSE)
    except LLMError as exc:
        return OperatorsOutcome(generic, "default", f"guide LLM failed: {exc}"[:500])
    parsed = parse_operators(call.text)
    if parsed is None:
        return OperatorsOutcome(
            generic, "default", "the guide answer had no DIVERGE and REFINE sections"
        )
    return OperatorsOutcome(with_examples(generic, *parsed), "generated")


# -- insight for a strategy rewrite ------------------------------------------------------------


@dataclass(frozen=True)
class Insight:
    """What the rewrite prompt shows besides the raw numbers; each part falls back on its own."""

    population: str
    problem: str
    outcomes: Mapping[str, str]
    #: Which parts came from the guide model (for the event).
    generated: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()


def _insight_prompt(stats: str) -> Prompt:
    return Prompt(
        system=f"{INSIGHT_MARKER}\n\nYou read population statistics of an evolutionary program "
        "search and state what they show. Number-backed observations only: every bullet cites "
        "the numbers it rests on. At most 8 bullets, no advice, no code.",
        user=f"# Population statistics\n{stats}\n",
        kind="guide",
    )


def _summary_prompt(task_context: str) -> Prompt:
    return Prompt(
        system=f"{SUMMARY_MARKER}\n\nSummarise the optimisation problem below for someone who "
        "writes search strategies for it: what is optimised, what makes a candidate valid, "
        "what the score rewards. Fewer than 100 words, no code.",
        user=f"# Problem\n{task_context.strip() or '(no description)'}\n",
        kind="guide",
    )


def _outcomes_prompt(changes: Mapping[str, str]) -> Prompt:
    blocks = "\n\n".join(f"## Strategy {sid}\n{text}" for sid, text in changes.items())
    return Prompt(
        system=f"{OUTCOMES_MARKER}\n\nFor each search strategy below you get how the solution "
        "population changed while it was active (statistics before and after, and a trace of "
        "its last selections). For each, write 1-3 sentences on what it did to the population "
        "(progress, diversity, reuse), citing numbers. Answer with one '## Strategy <id>' "
        "section per strategy, in the same order.",
        user=f"{blocks}\n",
        kind="guide",
    )


def _sections(text: str, ids: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for sid in ids:
        match = re.search(
            rf"^\s*#{{1,3}}\s*Strategy\s+{re.escape(sid)}\b.*$\n(.*?)(?=^\s*#{{1,3}}\s*Strategy\b|\Z)",
            text,
            re.M | re.S,
        )
        if match and match.group(1).strip():
            out[sid] = match.group(1).strip()[:MAX_SUMMARY_CHARS]
    return out


def summary_key(task_context: str) -> str:
    return hashlib.sha256(task_context.encode()).hexdigest()[:16]


async def gather_insight(
    llm: LLM,
    *,
    stats: str,
    task_context: str,
    others: Sequence[StrategyRecord],
    changes: Mapping[str, str],
    summaries: dict[str, str],
    use_llm: bool = True,
) -> Insight:
    """The three guide calls of one rewrite, concurrently; ``summaries`` caches the problem
    summary by input hash (the caller keeps it in its checkpointed state)."""
    key = summary_key(task_context)
    if not use_llm:
        return Insight(stats, summaries.get(key, ""), dict(changes))
    wanted = {r.id: changes[r.id] for r in others if changes.get(r.id)}

    async def ask(prompt: Prompt) -> str | LLMError:
        try:
            return (await llm.generate(prompt, purpose=PURPOSE)).text
        except LLMError as exc:
            return exc

    jobs = [ask(_insight_prompt(stats))]
    if key not in summaries:
        jobs.append(ask(_summary_prompt(task_context)))
    if wanted:
        jobs.append(ask(_outcomes_prompt(wanted)))
    answers = list(await asyncio.gather(*jobs))
    generated: list[str] = []
    errors: list[str] = []

    def take(name: str) -> str | None:
        answer = answers.pop(0)
        if isinstance(answer, LLMError):
            errors.append(f"{name}: {answer}"[:300])
            return None
        if not answer.strip():
            errors.append(f"{name}: empty answer")
            return None
        generated.append(name)
        return answer.strip()

    population = take("population")
    population = population[:MAX_INSIGHT_CHARS] if population else stats
    if key not in summaries:
        summary = take("problem")
        if summary:
            summaries[key] = summary[:MAX_SUMMARY_CHARS]
    elif summaries.get(key):
        generated.append("problem (cached)")
    outcomes = dict(changes)
    if wanted:
        text = take("outcomes")
        if text:
            outcomes.update(_sections(text, list(wanted)))
    return Insight(population, summaries.get(key, ""), outcomes, tuple(generated), tuple(errors))
