"""Host side of the strategy wire format: programs out, answers in (the trust boundary).

``program_record`` turns a run's :class:`~harness.core.records.Program` into the plain record a
strategy container receives (the field names of SkyDiscover's ``Program``).  ``resolve`` turns
a strategy's answer (label tokens and ids) back into a :class:`Selection` over the *host's*
records, rejecting everything a well-behaved strategy cannot produce: ids it was never given,
ids no longer in the population, more context than asked for, the parent inside its own
context, duplicates, and labels outside the allowed set.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from harness.core.errors import StrategyError
from harness.core.population import PopulationView
from harness.core.records import Program, Selection

__all__ = ["Answer", "Labels", "decode_answer", "program_record", "resolve"]

DIVERGE, REFINE = "@diverge", "@refine"
#: Characters of each artifact value a strategy receives (artifacts can hold long logs).
ARTIFACT_CHARS = 2000


@dataclass(frozen=True)
class Labels:
    """The run's variation-operator texts (DIVERGE/REFINE); "" disables a label."""

    diverge: str = ""
    refine: str = ""

    def token(self, text: str) -> str:
        if not text:
            return ""
        if text == self.diverge:
            return DIVERGE
        if text == self.refine:
            return REFINE
        return text  # a label from elsewhere (another scaffold's text): shown as is

    def text(self, token: str) -> str:
        return {DIVERGE: self.diverge, REFINE: self.refine}.get(token, token)

    def as_dict(self) -> dict[str, str]:
        return {"diverge": self.diverge, "refine": self.refine}


@dataclass(frozen=True)
class Answer:
    """A strategy's choice: (label token, id) for the parent and each context program."""

    parent: tuple[str, str]
    context: tuple[tuple[str, str], ...]


def program_record(program: Program, labels: Labels) -> dict[str, Any]:
    """One program as a strategy sees it (SkyDiscover field names; plain data only)."""
    context_ids = list(program.inspiration_ids)
    return {
        "id": program.id,
        "solution": program.code,
        "language": program.language,
        "metrics": dict(program.metrics),
        "iteration_found": program.iteration,
        "parent_id": program.parent_id,
        "other_context_ids": context_ids if program.parent_id is not None else None,
        "parent_info": [labels.token(program.parent_label), program.parent_id]
        if program.parent_id is not None
        else None,
        "context_info": [["", pid] for pid in context_ids] if program.parent_id else None,
        # The reference stamps wall-clock time; a deterministic stamp keeps replays exact.
        "timestamp": float(program.iteration),
        "metadata": dict(program.metadata),
        "artifacts": {k: str(v)[:ARTIFACT_CHARS] for k, v in program.artifacts.items()},
        "generation": program.generation,
    }


def _pair(value: Any, where: str) -> tuple[str, str]:
    if not (isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value)):
        raise StrategyError(f"the strategy server sent a malformed {where}", kind="protocol")
    return value[0], value[1]


def decode_answer(result: Any) -> Answer:
    """Shape check of a ``sample`` response (the server is untrusted too)."""
    if not isinstance(result, dict) or not isinstance(result.get("context"), list):
        raise StrategyError("the strategy server sent a malformed sample answer", kind="protocol")
    parent = _pair(result.get("parent"), "parent")
    context = tuple(_pair(c, "context entry") for c in result["context"])
    return Answer(parent, context)


def _label(token: str, labels: Labels, allowed: Collection[str], where: str) -> str:
    if token in allowed:
        return labels.text(token)
    shown = token[1:] if token.startswith("?") else token
    raise StrategyError(
        f"the strategy labelled the {where} {shown[:80]!r}; allowed labels: "
        + ", ".join(repr(a or "") for a in sorted(allowed)),
        kind="invalid",
    )


def resolve(
    answer: Answer,
    *,
    population: PopulationView,
    known: Collection[str],
    k: int,
    labels: Labels,
    info: Mapping[str, Any] | None = None,
) -> Selection:
    """The :class:`Selection` an answer stands for; raises ``StrategyError(kind="invalid")``."""
    parent_allowed = {""} | {
        t for t, text in ((DIVERGE, labels.diverge), (REFINE, labels.refine)) if text
    }
    plabel_token, parent_id = answer.parent

    def program(pid: str, role: str) -> Program:
        if pid not in known:
            raise StrategyError(
                f"the {role} {pid[:80]!r} was never given to the strategy (fabricated id)",
                kind="invalid",
            )
        found = population.get(pid)
        if found is None:
            raise StrategyError(f"the {role} {pid!r} is not in the population", kind="invalid")
        return found

    parent = program(parent_id, "parent")
    limit = min(k, len(population))
    if len(answer.context) > limit:
        raise StrategyError(
            f"the strategy returned {len(answer.context)} context programs; at most {limit} "
            f"were asked for (k={k}, population {len(population)})",
            kind="invalid",
        )
    seen = {parent_id}
    context = []
    for token, pid in answer.context:
        if pid == parent_id:
            raise StrategyError(f"the parent {pid!r} is also in its own context", kind="invalid")
        if pid in seen:
            raise StrategyError(f"the context lists {pid!r} twice", kind="invalid")
        seen.add(pid)
        _label(token, labels, {""}, "context program")
        context.append(program(pid, "context program"))
    return Selection(
        parent=parent,
        inspirations=tuple(context),
        parent_label=_label(plabel_token, labels, parent_allowed, "parent"),
        inspiration_labels=tuple("" for _ in context),
        info=dict(info or {}),
    )
