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


def test_the_checkpoint_names_every_member_in_order_in_chunks_that_stay_put() -> None:
    """Members go into the state in chunks of 1,024 ids: full chunks are the same objects
    from one state to the next (a checkpoint delta skips them), and a restore (from chunks, or
    from the flat ``members`` list of earlier checkpoints) gives the same population."""
    import random

    rng = random.Random(3)
    for capacity in (None, 1500):
        pop = InMemoryPopulation(capacity=capacity)
        programs = {f"p{i}": prog(f"p{i}", rng.random()) for i in range(2600)}
        before = pop.state_dict()
        for program in programs.values():
            pop.add(program)
            state = pop.state_dict()
            flat = [pid for chunk in state["member_chunks"] for pid in chunk]
            assert flat == [p.id for p in pop.programs()]
            if capacity is None and len(before["member_chunks"]) > 1:
                assert state["member_chunks"][0] is before["member_chunks"][0]
            before = state
        for saved in (state, {"members": flat, "next_seq": state["next_seq"]}):
            again = InMemoryPopulation(capacity=capacity)
            again.load_state_dict(saved, programs)
            assert [p.id for p in again.programs()] == flat
            assert [p.id for p in again.top(50)] == [p.id for p in pop.top(50)]
            assert again.state_dict() == state
