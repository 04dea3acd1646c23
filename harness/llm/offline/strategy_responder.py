"""The offline model's answer to EvoX strategy-rewrite prompts: a well-formed strategy module.

Detected by the rewrite prompt's heading (:data:`harness.evox.meta.MARKER`).  The answer is a
*variant of the current strategy*: if the strategy in the prompt's last code block is one of
ours (it carries an ``# offline-variant:`` line) one rule or parameter is changed, otherwise a
fresh combination of parent rule (uniform, tournament, top fraction, recency-weighted,
epsilon-best), context rule (random, top, recent, mixed) and label rule (none, or
DIVERGE/REFINE on stagnation) is drawn.  With a fault directive in the prompt (see
:mod:`harness.llm.offline.strategy_faults`) a hostile variant is drawn at the given rates.

Register it first in :func:`harness.llm.offline.responders.default_responders`.
"""

from __future__ import annotations

from harness.llm.offline.responders import (
    OfflineRequest,
    Responder,
    ResponseContext,
    current_program,
    marker,
)
from harness.llm.offline.strategy_faults import draw, parse_directive
from harness.llm.offline.strategy_templates import (
    mutate_variant,
    parse_variant,
    random_variant,
    render,
)

__all__ = ["STRATEGY_MARKER", "STRATEGY_HEADER", "answer_strategy", "strategy_responder"]

#: Same text as ``harness.evox.meta.MARKER`` (not imported: the model must not need harness.evox).
STRATEGY_MARKER = "# EvoX search-strategy rewrite"
STRATEGY_HEADER = (
    "[galapagos offline mutation model] This answer comes from Galapagos' offline model, not "
    "from an LLM: it assembles a strategy variant from fixed templates."
)


def answer_strategy(request: OfflineRequest, ctx: ResponseContext) -> str:
    current = current_program(request) or ""
    base = parse_variant(current)
    variant = mutate_variant(base, ctx.rng) if base else random_variant(ctx.rng)
    fault = draw(parse_directive(request.last_user), ctx.rng)
    fuse = ctx.rng.randint(2, 4)
    what = f"a variant of the current strategy: {variant.describe()}"
    if fault:
        what += f"; fault injection: {fault}" + (
            f" (fires after {fuse} real additions)"
            if fault in ("crash_sample", "crash_add", "hang", "alloc")
            else ""
        )
    code = render(variant, fault, fuse)
    return f"{STRATEGY_HEADER}\nThis is {what}.\n\n```python\n{code}```\n"


def strategy_responder() -> Responder:
    return Responder("evox_strategy", marker(STRATEGY_MARKER), answer_strategy)
