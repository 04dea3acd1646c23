"""Benchmarks: a scaffold × task × seed matrix of ordinary stored runs, and its leaderboard.

- :func:`plan_benchmark` — validate every cell and the name against the store (nothing runs)
- :func:`prepare_cells`, :func:`run_benchmark` — run the cells on one shared
  :class:`~harness.runtime.Runtime`, resumably
- :func:`leaderboard`, :func:`curves`, :func:`write_csv` — the table, with its provenance;
  :func:`markdown`, :func:`latex`, :func:`csv_text` — the table as text to paste;
  :func:`write_plots` (``harness.benchmark.plots``) — its figures
"""

from __future__ import annotations

from harness.benchmark.leaderboard import (
    best_so_far,
    csv_text,
    curves,
    leaderboard,
    resolve_benchmark,
    write_csv,
)
from harness.benchmark.matrix import (
    BenchmarkPlan,
    BenchmarkSpec,
    CellPlan,
    plan_benchmark,
    split_list,
)
from harness.benchmark.render import latex, markdown
from harness.benchmark.runner import BenchmarkResult, CellState, prepare_cells, run_benchmark

__all__ = [
    "BenchmarkPlan",
    "BenchmarkResult",
    "BenchmarkSpec",
    "CellPlan",
    "CellState",
    "best_so_far",
    "csv_text",
    "curves",
    "latex",
    "leaderboard",
    "markdown",
    "plan_benchmark",
    "prepare_cells",
    "resolve_benchmark",
    "run_benchmark",
    "split_list",
    "write_csv",
]
