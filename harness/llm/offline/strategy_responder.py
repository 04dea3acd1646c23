"""The offline model's answer to EvoX strategy rewrites (purpose ``strategy``): a strategy module.

The answer is a *variant of the current strategy*: if the strategy in the prompt's last code
block is one of ours (it carries an ``# offline-variant:`` line) one rule or parameter is
changed, otherwise a fresh combination of parent rule (uniform, tournament, top fraction,
recency-weighted, epsilon-best), context rule (random, top, recent, mixed) and label rule (none,
or DIVERGE/REFINE on stagnation) is drawn.  A responder built with fault rates (a test seam:
``strategy_responder(faults=…)``, see :mod:`harness.llm.offline.strategy_faults`) draws hostile
variants at those rates; the default chain has none.
"""

from __future__ import annotations

from collections.abc import Mapping

from harness.llm.offline.responders import (
    OfflineRequest,
    Responder,
    ResponseContext,
    current_program,
    for_purpose,
)
from harness.llm.offline.strategy_faults import check_rates, draw
from harness.llm.offline.strategy_templates import (
    mutate_variant,
    parse_variant,
    random_variant,
    render,
)

__all__ = ["STRATEGY_HEADER", "answer_strategy", "strategy_responder"]

STRATEGY_HEADER = (
    "[galapagos offline mutation model] This answer comes from Galapagos' offline model, not "
    "from an LLM: it assembles a strategy variant from fixed templates."
)


def answer_strategy(
    request: OfflineRequest, ctx: ResponseContext, faults: Mapping[str, float] | None = None
) -> str:
    """A strategy variant; with ``faults``, a hostile one at those rates.  The fault draw is
    made with or without rates, so an answer that draws no fault is the same whatever they are."""
    current = current_program(request) or ""
    base = parse_variant(current)
    variant = mutate_variant(base, ctx.rng) if base else random_variant(ctx.rng)
    fault = draw(faults or {}, ctx.rng)
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


def strategy_responder(faults: Mapping[str, float] | None = None) -> Responder:
    """``faults``: probability per answer of each hostile kind (tests only; ``ValueError`` for
    unknown kinds or rates that do not form a distribution)."""
    rates = check_rates(faults or {})
    return Responder(
        "evox_strategy",
        for_purpose("strategy"),
        lambda request, ctx: answer_strategy(request, ctx, rates),
    )
