"""The strategy-rewrite prompt: what the meta-LLM is shown about earlier strategies."""

from __future__ import annotations

from harness.core.records import Program
from scaffolds.evox.descriptor import describe_change, describe_population
from scaffolds.evox.history import StrategyRecord
from scaffolds.evox.meta import build_prompt, read_strategy


def population(n: int) -> list[Program]:
    programs = [Program(id="p0", code="x", metrics={"combined_score": 0.5}, iteration=0, score=0.5)]
    for i in range(1, n):
        score = 0.5 + 0.01 * i * (1 if i % 2 else -1)
        programs.append(
            Program(
                id=f"p{i}",
                code="x",
                metrics={"combined_score": score},
                score=score,
                iteration=i,
                parent_id=f"p{i - 1}",
            )
        )
    return programs


def test_change_lists_what_moved_and_the_trace() -> None:
    start = describe_population(population(2))
    end = describe_population(population(6))
    change = describe_change(start, end)
    assert "population_size: 2 -> 6" in change
    assert "execution_trace (end of its window):" in change
    assert "iteration 5: p5" in change
    # Facts that did not move are left out.
    assert describe_change(end, end) == "execution_trace (end of its window):\n" + "\n".join(
        line for line in end.partition("execution_trace:")[2].splitlines() if line.strip()
    )


def test_other_strategies_come_with_how_the_population_changed() -> None:
    other = StrategyRecord(
        "s1",
        "class EvolvedProgramDatabase: ...\n",
        metrics={"combined_score": 0.01},
        start_state=describe_population(population(2)),
        end_state=describe_population(population(6)),
    )
    parent = StrategyRecord("s2", "class EvolvedProgramDatabase: pass\n")
    prompt = build_prompt(parent=parent, others=[other], task="toy", window="w", population="p")
    text = prompt.messages()[-1]["content"]
    section = text.split("## Strategy s1")[1].split("# Your task")[0]
    assert "How the population changed while it was active:" in section
    assert "population_size: 2 -> 6" in section
    # The current strategy stays last, and is what an answer parser finds there.
    assert text.rstrip().endswith("```")
    assert read_strategy(text.split("# Current strategy s2")[1]) == parent.source.rstrip("\n")
