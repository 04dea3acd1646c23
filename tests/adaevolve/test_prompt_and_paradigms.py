"""The AdaEvolve prompt (sections, labels, siblings, retry error, current program last) and the
paradigm texts (request, parser, the offline model's answers)."""

from __future__ import annotations

import json
import random

from harness.core.prompt import PromptContext
from harness.core.records import Attempt, Selection, TaskInfo
from harness.diffs import find_fences
from harness.llm.offline.paradigm_responder import paradigm_responder
from harness.llm.offline.responders import OfflineRequest, ResponseContext
from scaffolds.adaevolve.paradigms import format_guidance, paradigm_prompt, parse_ideas
from scaffolds.adaevolve.policy import EXPLORE_LABEL
from scaffolds.adaevolve.population import AdaEvolveArchipelago, ArchipelagoConfig
from scaffolds.adaevolve.prompt import AdaEvolvePromptBuilder, AdaEvolvePromptConfig
from tests.adaevolve.helpers import program

IDEA = {
    "idea": "Use simulated annealing",
    "description": "Anneal the layout.",
    "what_to_optimize": "combined_score",
    "cautions": "keep it valid",
    "approach_type": "simulated_annealing",
}


def test_parser_takes_the_object_a_list_or_a_fenced_block_and_drops_incomplete_items() -> None:
    text = json.dumps({"ideas": [IDEA, {"idea": "no description"}]})
    assert parse_ideas(text) == [IDEA]
    assert parse_ideas(json.dumps([IDEA])) == [IDEA]
    assert parse_ideas("Here you go:\n```json\n" + json.dumps({"ideas": [IDEA]}) + "\n```") == [
        IDEA
    ]
    minimal = {"idea": "x", "description": "y", "approach_type": "z"}
    assert parse_ideas(json.dumps([minimal]))[0]["what_to_optimize"] == "score"
    assert parse_ideas("no json at all") == []
    assert parse_ideas(json.dumps({"ideas": "nope"})) == []


def test_offline_model_answers_a_paradigm_request_with_as_many_valid_ideas_as_asked() -> None:
    best = program("p3", "def f():\n    return 1\n", 0.7)
    task = TaskInfo(description="Pack circles in a unit square.")
    prompt = paradigm_prompt(best, 0.7, ["FAILED: x - y (improvement: +0.0000)"], task, 4)
    assert "FAILED: x - y" in prompt.user
    request = OfflineRequest(
        "offline",
        tuple((m["role"], m["content"]) for m in prompt.messages()),
        seed=1,
        purpose="paradigm",
    )
    responder = paradigm_responder()
    assert responder.detect(request)
    ideas = parse_ideas(responder.respond(request, ResponseContext(random.Random(1))))
    assert len(ideas) == 4 and len({i["approach_type"] for i in ideas}) == 4


def test_guidance_block_never_opens_a_code_fence() -> None:
    text = format_guidance({**IDEA, "description": "```python\nprint(1)\n```"})
    assert "```" not in text and "Use simulated annealing" in text


def test_prompt_sections_label_siblings_retry_error_and_current_program_last() -> None:
    population = AdaEvolveArchipelago(ArchipelagoConfig(num_islands=1))
    parent = program("p0", "def f():\n    return 1\n", 0.5)
    population.add(parent)
    for i, score in ((1, 0.6), (2, 0.5), (3, 0.3)):
        population.add(program(f"p{i}", f"def f():\n    return {i}\n", score, "p0", island=0))
    builder = AdaEvolvePromptBuilder(AdaEvolvePromptConfig(), population)
    selection = Selection(
        parent=parent,
        inspirations=(population.get("p1"),),  # type: ignore[arg-type]
        parent_label=EXPLORE_LABEL,
        tags={"island": 0, "mode": "exploration"},
    )
    context = PromptContext(
        iteration=4,
        task=TaskInfo(description="Maximise f."),
        attempts=(Attempt(0, "evaluate", "ValueError: bad shape"),),
        memory=format_guidance(IDEA),
    )
    user = builder.build(selection, context).user
    assert find_fences(user)[-1].body.strip() == parent.code.strip()
    order = [
        user.index(s)
        for s in (
            "# Previous attempts",
            "# Other context programs",
            "# Current program",
            "Breakthrough idea",
            "Earlier edits of this parent",
            "The previous attempt failed",
            "# Instructions",
        )
    ]
    assert order == sorted(order)
    assert EXPLORE_LABEL in user
    assert "1 improved, 1 unchanged, 1 regressed" in user
    assert "ValueError: bad shape" in user
