"""``docs/benchmarking.md`` shows a leaderboard in Markdown made by a real benchmark: this test
runs that benchmark (the Docker sandbox, the offline model) and compares its table, provenance
line included, with the one in the page.  ``GALAPAGOS_UPDATE_DOCS=1`` writes it instead (after a
change that moves the numbers, e.g. a task's files: their hash is in the line)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.cli.helpers import ROOT, galapagos

DOC = ROOT / "docs" / "benchmarking.md"
BEGIN = "<!-- generated leaderboard: tests/benchmark/test_docs_leaderboard.py -->"
END = "<!-- end of the generated leaderboard -->"
BENCH = (
    "bench", "--name", "docs-example", "--scaffolds", "topk,best_of_n",
    "--tasks", "circle_packing,function_minimization", "--seeds", "2", "--iterations", "3",
)  # fmt: skip


def _same_up_to_the_commit(text: str) -> str:
    """The Galapagos commit in the provenance line changes with every commit, not the table."""
    return re.sub(r"(Galapagos [^;()]+?) \([0-9a-f]{7,40}\)", r"\1", text)


@pytest.mark.docker
@pytest.mark.slow
def test_the_benchmarking_page_shows_a_real_benchmarks_markdown_table(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    proc = galapagos(*BENCH, store=store, timeout=1200)
    assert proc.returncode == 0, proc.stderr
    proc = galapagos("leaderboard", "--bench", "docs-example", "--format", "markdown", store=store)
    assert proc.returncode == 0, proc.stderr
    table = proc.stdout
    assert table.startswith("> benchmark docs-example: **offline model — NOT a method result")
    command = "galapagos " + " ".join(BENCH) + "\ngalapagos leaderboard --format markdown"
    block = f"{BEGIN}\n```bash\n{command}\n```\n\n{table}{END}"
    doc = DOC.read_text()
    start, end = doc.index(BEGIN), doc.index(END) + len(END)
    if os.environ.get("GALAPAGOS_UPDATE_DOCS") == "1":
        DOC.write_text(doc[:start] + block + doc[end:])
        return
    assert _same_up_to_the_commit(doc[start:end]) == _same_up_to_the_commit(block), (
        "docs/benchmarking.md's leaderboard is stale: rerun this test with GALAPAGOS_UPDATE_DOCS=1"
    )
