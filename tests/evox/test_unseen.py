"""The sampler's ``unseen`` (what brings the active strategy up to date) equals the full scan it
replaces: every member in iteration order when any is new to the strategy, else nothing."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest

from harness.core.records import Program
from scaffolds.evox.policy import EvolvedStrategySampler
from tests.conformance.runner import build, run


def _full_scan(sampler: EvolvedStrategySampler) -> list[Program]:
    members = sampler.members()
    known = sampler.chain.active.known
    return members if any(p.id not in known for p in members) else []


@pytest.mark.slow
def test_unseen_equals_the_full_scan_as_programs_come_and_strategies_change(
    tmp_path: Path,
) -> None:
    built = build("evox", tmp_path / "s.sqlite", iterations=6)
    run(built)
    sampler = cast(EvolvedStrategySampler, built.scaffold.selection)
    population = built.scaffold.population
    assert sampler.unseen() == _full_scan(sampler) == []
    new = Program(id="x1", code="x = 1\n", iteration=2, metrics={"combined_score": 0.1}, score=0.1)
    population.add(new)
    assert sampler.unseen() == _full_scan(sampler) == sampler.members()
    assert [p.id for p in sampler.unseen()].index("x1") < len(sampler.members()) - 1  # by iteration
    sampler.chain.active.known.add("x1")  # what feeding it does (the run's servers are closed)
    assert sampler.unseen() == _full_scan(sampler) == []
    sampler.chain.active.known = set()  # a strategy whose known set was replaced: checked anew
    assert sampler.unseen() == _full_scan(sampler) == sampler.members()
