"""``openevolve_template`` against OpenEvolve 0.4.0's ``PromptSampler.build_prompt`` (diff mode,
as its parallel worker calls it) on states of a scripted run: the same fitness and feature
coordinates, previous attempts (numbers, changes, metrics, outcome), top programs (order,
score, code, key features), diverse programs (as a set: both sides draw them at random, with
different RNGs), inspirations after de-duplication (order, score, type, code, features) and
the parent's execution output after the security filter.  The wording around these differs
(ours is our own); two inspiration features differ by design (see :func:`features`)."""

from __future__ import annotations

import asyncio
import dataclasses
import random
import re
from collections import Counter
from typing import Any

import pytest

from harness.core.prompt import PromptContext
from harness.core.records import IterationOutcome, Program, Selection
from scaffolds.openevolve.prompt import OpenEvolvePromptBuilder, OpenEvolvePromptConfig
from tests.fakes import select_now
from tests.openevolve.helpers import ScriptStep, build
from tests.oracles import cases_openevolve as cases

PROBE = "import probes_openevolve\nprint(json.dumps(probes_openevolve.diff_prompts(DATA)))"
ARTIFACTS = {
    "stdout": "\x1b[31mred\x1b[0m result 0.5, key " + "a1" * 20 + "\npassword=hunter2",
    "note": "plain text",
}
#: A fenced program; 0.4.0 keeps the code's final newline inside the fence, we do not.
FENCE = r"```python\n(.*?)\n*```"


def as_dict(p: Program) -> dict[str, Any]:
    return {
        "id": p.id,
        "code": p.code,
        "metrics": dict(p.metrics),
        "metadata": {**p.metadata, **({"changes": p.changes} if p.changes else {})},
    }


def features(text: str) -> list[str]:
    """An inspiration's features, with the two that differ by design made comparable: the
    change summary (0.4.0 prints "Modification:" alone) is left out, and a metric feature
    counts as "metric" (0.4.0's fragments for them fail to format and print
    "[Fragment formatting error: 'metric_name']"; ours name the metric)."""
    out = []
    for item in text.split(", "):
        if item.startswith("Modification:"):
            continue
        metric = item.startswith(("Excellent ", "[Fragment formatting error")) or (
            item.startswith("Alternative ") and item.endswith(" approach")
        )
        out.append("metric" if metric else item)
    return out


def parse(user: str) -> dict[str, Any]:
    def all_of(pattern: str) -> list[Any]:
        return re.findall(pattern, user, flags=re.S)

    top_part, _, rest = user.partition("## Diverse Programs")
    diverse_part = rest.partition("## Inspiration Programs")[0] if rest else ""
    program = rf"### Program (\S+) \(Score: ([^)]*)\)\n{FENCE}\nKey features: ([^\n]*)"
    inspirations = all_of(
        rf"### Inspiration (\d+) \(Score: ([^,]*), Type: ([^)]*)\)\n{FENCE}\nUnique approach: "
        r"([^\n]*)"
    )
    return {
        "fitness": all_of(r"- Fitness: ([^\n]*)"),
        "coordinates": all_of(r"- Feature coordinates: ([^\n]*)"),
        "attempts": all_of(
            r"### Attempt (\d+)\n- Changes: ([^\n]*)\n- Metrics: ([^\n]*)\n- Outcome: ([^\n]*)"
        ),
        "top": re.findall(program, top_part.partition("## Inspiration Programs")[0], re.S),
        "diverse": sorted(
            (score, code, features)
            for _, score, code, features in re.findall(program, diverse_part, re.S)
        ),
        "inspirations": [
            (n, score, kind, code, features(feats)) for n, score, kind, code, feats in inspirations
        ],
        "artifacts": all_of(r"### (\w+)\n```\n(.*?)\n```"),
        "current": re.findall(FENCE, user, re.S)[-1],
    }


def replay(name: str, every: int = 10, steps: int = 90) -> tuple[list[Any], list[Any]]:
    """Play the scenario with our blocks and, every ``every`` steps, build our prompt and the
    reference's inputs from the same state."""
    pop, policy = build(name, random.Random(cases.SCENARIOS[name]["seed"]))
    builder = OpenEvolvePromptBuilder(OpenEvolvePromptConfig(), pop, num_top=3, num_diverse=2)
    copies: Counter[str] = Counter()
    seed = Program(
        id="p0",
        code=cases.SEED_CODE,
        iteration=0,
        metrics=cases.seed_metrics(cases.SCENARIOS[name]),
        score=0,
    )
    pop.add(seed)
    ours, payload = [], []
    for it in range(1, steps + 1):
        selection = select_now(policy, pop, it)
        parent = selection.parent
        assert parent is not None
        if it % every == 0:
            shown = dataclasses.replace(parent, artifacts=ARTIFACTS)
            prompt = builder.build(
                Selection(parent=shown, inspirations=selection.inspirations),
                PromptContext(iteration=it, population=pop),
            )
            ours.append(parse(prompt.user))
            payload.append(
                {
                    "island": [
                        as_dict(p) for p in pop.island_members(pop.island_of(parent.id) or 0)
                    ],
                    "parent": as_dict(shown),
                    "inspirations": [as_dict(p) for p in selection.inspirations],
                    "num_top": 3,
                    "num_diverse": 2,
                    "iteration": it,
                    "artifacts": ARTIFACTS,
                    "dimensions": list(pop.config.feature_dimensions),
                }
            )
        code, metrics = cases.child_of(name, it, parent.id, parent.code, dict(parent.metrics))
        child = Program(
            id=f"p{it}",
            code=code,
            iteration=it,
            metrics=metrics,
            score=0,
            parent_id=parent.id,
            changes=f"change of p{it}",
            metadata={**selection.tags, "parent_metrics": dict(parent.metrics)},
        )
        pop.add(child)
        outcome = IterationOutcome(it, selection, child, admitted=True)
        asyncio.run(pop.end_iteration(ScriptStep(it, copies), outcome))
    return ours, payload


@pytest.mark.slow
@pytest.mark.parametrize("name", ["small", "custom_dims", "score_dim"])
def test_prompt_content_equals_the_reference(reference, name: str) -> None:  # type: ignore[no-untyped-def]
    ours, payload = replay(name)
    theirs = [parse(p["user"]) for p in reference(PROBE, payload)]
    assert len(ours) == len(theirs) == 9
    for n, (mine, ref) in enumerate(zip(ours, theirs, strict=True)):
        for key in mine:
            assert mine[key] == ref[key], f"prompt {n}: {key} differs"
    assert all(m["attempts"] and m["top"] for m in ours)
    assert any(m["inspirations"] for m in ours) and any(m["diverse"] for m in ours)
