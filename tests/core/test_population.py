"""The keep-all population: stable ranking, strict-best, capacity eviction, state round-trip."""

from __future__ import annotations

from harness.components.population import InMemoryPopulation
from harness.core.records import Program


def prog(pid: str, score: float) -> Program:
    return Program(id=pid, code="", iteration=0, metrics={"combined_score": score}, score=score)


def test_ties_keep_insertion_order() -> None:
    pop = InMemoryPopulation()
    for pid, s in [("a", 0.5), ("b", 0.9), ("c", 0.5), ("d", 0.9)]:
        pop.add(prog(pid, s))
    assert [p.id for p in pop.top(4)] == ["b", "d", "a", "c"]
    assert pop.best().id == "b"  # strict >: the first of equal bests wins


def test_capacity_evicts_the_worst_and_rejects_a_worse_newcomer() -> None:
    pop = InMemoryPopulation(capacity=2)
    assert pop.add(prog("a", 0.5))
    assert pop.add(prog("b", 0.7))
    assert pop.add(prog("c", 0.6))  # evicts a
    assert [p.id for p in pop.programs()] == ["b", "c"]
    assert not pop.add(prog("d", 0.1))  # the newcomer is the worst: not admitted
    assert "d" not in pop


def test_state_round_trip_restores_order() -> None:
    pop = InMemoryPopulation()
    programs = {p.id: p for p in (prog("a", 0.3), prog("b", 0.3), prog("c", 0.8))}
    for p in programs.values():
        pop.add(p)
    restored = InMemoryPopulation()
    restored.load_state_dict(pop.state_dict(), programs)
    assert [p.id for p in restored.top(3)] == [p.id for p in pop.top(3)]
    assert [p.id for p in restored.programs()] == ["a", "b", "c"]
