"""The trust boundary on the host: what a strategy answer may name, and how programs go out."""

from __future__ import annotations

import pytest

from harness.components.population import InMemoryPopulation
from harness.core.errors import StrategyError
from harness.core.records import Program
from scaffolds.evox.records import Answer, Labels, decode_answer, program_record, resolve

LABELS = Labels(diverge="DIVERGE TEXT", refine="REFINE TEXT")


def population(n: int) -> InMemoryPopulation:
    pop = InMemoryPopulation()
    for i in range(n):
        pop.add(
            Program(
                id=f"p{i}", code="x", iteration=i, metrics={"combined_score": i}, score=float(i)
            )
        )
    return pop


def ask(answer: Answer, *, n: int = 5, k: int = 3, known: set[str] | None = None):
    pop = population(n)
    return resolve(
        answer, population=pop, known=known or {f"p{i}" for i in range(n)}, k=k, labels=LABELS
    )


def test_a_good_answer_becomes_a_selection_over_host_records() -> None:
    sel = ask(Answer(("@refine", "p2"), (("", "p0"), ("", "p4"))))
    assert sel.parent is not None and sel.parent.id == "p2"
    assert [p.id for p in sel.inspirations] == ["p0", "p4"]
    assert sel.parent_label == "REFINE TEXT"
    assert sel.inspiration_labels == ("", "")


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (Answer(("", "ghost"), ()), "fabricated id"),
        (Answer(("", "p1"), (("", "ghost"),)), "fabricated id"),
        (Answer(("", "p1"), (("", "p0"), ("", "p2"), ("", "p3"), ("", "p4"))), "at most 3"),
        (Answer(("", "p1"), (("", "p1"),)), "in its own context"),
        (Answer(("", "p1"), (("", "p2"), ("", "p2"))), "twice"),
        (Answer(("?Top programs", "p1"), ()), "allowed labels"),
        (Answer(("", "p1"), (("@diverge", "p2"),)), "context program"),
    ],
)
def test_invalid_answers_are_strategy_failures(answer: Answer, message: str) -> None:
    with pytest.raises(StrategyError) as info:
        ask(answer)
    assert info.value.kind == "invalid"
    assert message in str(info.value)


def test_an_id_known_to_the_strategy_but_gone_from_the_population_is_rejected() -> None:
    with pytest.raises(StrategyError, match="not in the population"):
        ask(Answer(("", "p9"), ()), known={"p9"})


def test_context_limit_is_min_of_k_and_population() -> None:
    with pytest.raises(StrategyError, match="at most 2"):
        ask(Answer(("", "p0"), (("", "p1"),) * 3), n=2, k=4)


def test_disabled_labels_allow_only_the_empty_label() -> None:
    pop = population(3)
    with pytest.raises(StrategyError):
        resolve(
            Answer(("@diverge", "p1"), ()), population=pop, known={"p1"}, k=2, labels=Labels("", "")
        )


def test_malformed_server_answers_are_protocol_failures() -> None:
    for bad in (
        None,
        {"parent": ["", "p1"]},
        {"parent": ["p1"], "context": []},
        {"parent": ["", 3], "context": []},
    ):
        with pytest.raises(StrategyError) as info:
            decode_answer(bad)
        assert info.value.kind == "protocol"


def test_program_records_use_the_reference_field_names() -> None:
    child = Program(
        id="p7",
        code="print(1)",
        iteration=7,
        metrics={"combined_score": 0.4},
        score=0.4,
        parent_id="p3",
        inspiration_ids=("p1", "p2"),
        parent_label="DIVERGE TEXT",
        generation=2,
        artifacts={"stderr": "x" * 10_000},
    )
    rec = program_record(child, LABELS)
    assert rec["solution"] == "print(1)" and rec["iteration_found"] == 7
    assert rec["parent_info"] == ["@diverge", "p3"]
    assert rec["other_context_ids"] == ["p1", "p2"]
    assert rec["context_info"] == [["", "p1"], ["", "p2"]]
    assert len(rec["artifacts"]["stderr"]) == 2000
    seed = program_record(Program(id="p0", code="", iteration=0, metrics={}, score=0.0), LABELS)
    assert seed["parent_info"] is None and seed["other_context_ids"] is None


def test_evox_refuses_a_population_capacity() -> None:
    # The deployed strategy keeps every program it was given and has no remove operation: an
    # evicted program would come back as a context id the host no longer knows.
    from harness.core.errors import ConfigError
    from harness.core.registry import load_config

    _, config = load_config("evox")
    assert config.population.capacity is None
    with pytest.raises(ConfigError, match="EvoX keeps every program"):
        load_config("evox", overrides=["population.capacity=3"])
