"""The offline model's answers to AdaEvolve paradigm requests (purpose ``paradigm``): JSON ideas.

Not an LLM: each idea is a fixed template naming the problem's first words, drawn without
repetition from a small list of technique families (so consecutive requests differ), as many as
the request asks for.  Enough for the paradigm path (parsing, installation, rotation, outcome
history, prompts) to run offline and in tests.
"""

from __future__ import annotations

import json
import re

from harness.llm.offline.responders import (
    OfflineRequest,
    Responder,
    ResponseContext,
    for_purpose,
)

__all__ = ["paradigm_responder"]

NOTE = "galapagos offline model: templated paradigm ideas, not an LLM"

_IDEAS = (
    ("scipy.optimize.minimize", "Optimise all free parameters jointly with SLSQP ({topic})"),
    ("numpy.random.Generator", "Restart from several random starts, keep the best ({topic})"),
    ("simulated_annealing", "Anneal the current solution with a cooling schedule ({topic})"),
    ("greedy_construction", "Build the solution greedily, best local choice first ({topic})"),
    ("local_search", "Polish the solution with small coordinate-wise moves ({topic})"),
    ("symmetry", "Exploit a symmetric structure to shrink the search space ({topic})"),
)


def _topic(text: str) -> str:
    match = re.search(r"^# Problem\s*$\n(.*?)(?=^# |\Z)", text, re.M | re.S)
    words = re.findall(r"[A-Za-z][A-Za-z0-9_-]*", match.group(1) if match else text)[:5]
    return ("problem: " + " ".join(words) + " ...") if words else "the problem"


def _answer(request: OfflineRequest, ctx: ResponseContext) -> str:
    user = request.last_user
    found = re.search(r"holding (\d+) ideas", user)
    count = max(1, min(int(found.group(1)) if found else 3, len(_IDEAS)))
    topic = _topic(user)
    ideas = [
        {
            "idea": idea.format(topic=topic),
            "description": f"{NOTE}. Apply {approach} to the current best program: change the "
            "part that computes the result, keep the output format, check validity.",
            "what_to_optimize": "combined_score",
            "cautions": "keep every constraint satisfied; stay within the time limit",
            "approach_type": approach,
        }
        for approach, idea in ctx.rng.sample(_IDEAS, count)
    ]
    return json.dumps({"ideas": ideas}, indent=1)


def paradigm_responder() -> Responder:
    return Responder("adaevolve_paradigm", for_purpose("paradigm"), _answer)
