"""The population-state descriptor φ the strategy-writing LLM reads (numbers only).

Our own rendering of what the reference summarises (§2.6.8): score distribution and tiers,
distinct scores, top scores with repeats, iterations since a meaningful improvement, parent and
context reuse, recent scores, and a short execution trace (who was the parent, which label,
what came of it).  The reference has a guide LLM rewrite this into prose; we show the numbers.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence

from harness.core.records import Program

__all__ = ["describe_change", "describe_population", "describe_window"]

RECENT = 20
TRACE = 10
TOP_K = 20


def _f(x: float) -> str:
    return f"{x:.4f}"


def _quartiles(scores: list[float]) -> tuple[float, float, float]:
    if len(scores) >= 4:
        q25, q50, q75 = statistics.quantiles(scores, n=4)
        return q25, q50, q75
    median = statistics.median(scores)
    return median, median, median


def _pct(part: float, whole: float) -> str:
    return f"{100.0 * part / whole:.0f}%" if whole else "-"


def _trace(programs: Sequence[Program], by_id: dict[str, Program]) -> list[str]:
    lines, best = [], float("-inf")
    outcomes: dict[str, str] = {}
    for p in sorted(programs, key=lambda q: q.iteration):
        parent = by_id.get(p.parent_id) if p.parent_id else None
        if p.score > best:
            outcomes[p.id] = "NEW BEST"
        elif parent is None:
            outcomes[p.id] = "seed"
        elif p.score > parent.score:
            outcomes[p.id] = "above parent"
        elif p.score < parent.score:
            outcomes[p.id] = "regression"
        else:
            outcomes[p.id] = "no change"
        best = max(best, p.score)
    for p in sorted(programs, key=lambda q: q.iteration)[-TRACE:]:
        parent = by_id.get(p.parent_id) if p.parent_id else None
        label = "diverge/refine label" if p.parent_label else "no label"
        ctx = ", ".join(p.inspiration_ids) or "none"
        head = f"parent {parent.id} ({_f(parent.score)}, {label})" if parent else "no parent"
        lines.append(
            f"  iteration {p.iteration}: {p.id} scored {_f(p.score)} — {head}; "
            f"context [{ctx}]; {outcomes[p.id]}"
        )
    return lines


def describe_population(programs: Sequence[Program], *, threshold: float = 0.01) -> str:
    """The population as numbered facts, one per line."""
    if not programs:
        return "population_size: 0"
    ordered = sorted(programs, key=lambda p: p.iteration)
    recent = ordered[-RECENT:]
    by_id = {p.id: p for p in programs}
    lines = _score_facts(programs, ordered[-1].iteration, threshold)
    lines += _lineage_facts(programs, recent, by_id)
    lines += _recent_facts(recent, by_id)
    lines.append("execution_trace:")
    lines += _trace(programs, by_id)
    return "\n".join(lines)


def _score_facts(programs: Sequence[Program], last: int, threshold: float) -> list[str]:
    """Size, score distribution and tiers, the top scores and how long the best stood."""
    scores = [p.score for p in programs]
    n, best = len(scores), max(scores)
    q25, q50, q75 = _quartiles(scores)
    near = [p.iteration for p in programs if p.score >= best - threshold]
    top = sorted(scores, reverse=True)[:TOP_K]
    repeats = Counter(round(s, 4) for s in top)
    flags = [f"{_f(s)} repeated {c}x" for s, c in repeats.items() if c > 1]
    if len(repeats) == 1 and len(top) > 1:
        flags = ["ALL identical"]
    top_text = ", ".join(_f(s) for s in top) + (f" ({'; '.join(flags)})" if flags else "")
    return [
        f"population_size: {n}",
        f"score_distribution: best {_f(best)} | q75 {_f(q75)} | median {_f(q50)} | "
        f"q25 {_f(q25)} | worst {_f(min(scores))}",
        f"programs_by_score_tier: top (>= q75) {_pct(sum(s >= q75 for s in scores), n)} | "
        f"upper_mid {_pct(sum(q50 <= s < q75 for s in scores), n)} | "
        f"lower_mid {_pct(sum(q25 <= s < q50 for s in scores), n)} | "
        f"bottom {_pct(sum(s < q25 for s in scores), n)}",
        f"unique_score_values: {len({round(s, 4) for s in scores})}",
        f"top_{len(top)}_scores: {top_text}",
        f"iterations_without_improvement_over_{threshold:.4f}: {last - min(near)}",
    ]


def _lineage_facts(
    programs: Sequence[Program], recent: Sequence[Program], by_id: dict[str, Program]
) -> list[str]:
    """How parents and prompt contexts were reused (the latter two over the recent window)."""
    parents = Counter(p.parent_id for p in programs if p.parent_id)
    lines = [
        f"avg_children_per_parent: {sum(parents.values()) / len(parents):.2f}"
        if parents
        else "avg_children_per_parent: 0"
    ]
    recent_children = [p for p in recent if p.parent_id]
    if recent_children:
        pid, count = Counter(p.parent_id for p in recent_children).most_common(1)[0]
        score = _f(by_id[pid].score) if pid in by_id else "?"
        lines.append(
            f"most_reused_parent (last {len(recent)}): {pid} in "
            f"{_pct(count, len(recent_children))} of children (score {score})"
        )
    contexts = Counter(c for p in recent for c in p.inspiration_ids)
    if contexts:
        cid, count = contexts.most_common(1)[0]
        with_ctx = sum(1 for p in recent if p.inspiration_ids)
        lines.append(
            f"most_reused_context (last {len(recent)}): {cid} in {_pct(count, with_ctx)} of prompts"
        )
    return lines


def _recent_facts(recent: Sequence[Program], by_id: dict[str, Program]) -> list[str]:
    """The recent window's scores and its parents' scores."""
    return [
        f"recent_scores (last {len(recent)}): " + ", ".join(_f(p.score) for p in recent),
        "recent_parent_scores: "
        + ", ".join(_f(by_id[p.parent_id].score) if p.parent_id in by_id else "-" for p in recent),
    ]


def describe_change(start: str, end: str) -> str:
    """What changed between two descriptors of the same run, as ``key: before -> after`` lines,
    then the end's execution trace: how the population moved while one strategy was active
    (our numbers-only stand-in for the reference's LLM batch summary of the start→end diff)."""
    if not start and not end:
        return ""

    def facts(text: str) -> tuple[dict[str, str], list[str]]:
        head, _, trace = text.partition("execution_trace:")
        pairs = dict(
            (key.strip(), value.strip())
            for key, sep, value in (line.partition(":") for line in head.splitlines())
            if sep
        )
        return pairs, [line for line in trace.splitlines() if line.strip()]

    before, _ = facts(start)
    after, trace = facts(end)
    lines = [
        f"{key}: {before[key]} -> {value}"
        if key in before and before[key] != value
        else f"{key}: {value}"
        for key, value in after.items()
        if key in before and before[key] != value or key not in before
    ]
    if trace:
        lines.append("execution_trace (end of its window):")
        lines += trace
    return "\n".join(lines) if lines else "no change in the population's numbers"


def describe_window(*, start: int, total: int, horizon: int, threshold: float) -> str:
    return (
        f"The new strategy starts at iteration {start} of {total}. It runs for at least "
        f"{horizon} iterations and is replaced when the best score fails to improve by more "
        f"than {threshold:.4f} for {horizon} consecutive iterations, so it must make progress "
        "quickly. Exactly one program is generated per iteration (one sample() call, then one "
        "add() of the child if it evaluated successfully)."
    )
