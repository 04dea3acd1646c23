"""A leaderboard as text to paste: the same cells for the terminal, Markdown and LaTeX, each
with the table's provenance line as its caption.

Every number of a column is printed with the same significant digits (:func:`stats.sig`);
a spread within float noise prints as ``0``; a row without a scored run prints ``-`` once per
cell, never ``- ± -``.
"""

from __future__ import annotations

from typing import Any

from harness.benchmark.stats import sig, spread

__all__ = ["COLUMNS", "RANK_COLUMNS", "cells", "latex", "markdown", "rank_cells", "sorted_rows"]

COLUMNS = (
    "task", "scaffold", "rank", "best", "mean ± std", "95% CI", "n", "metric", "best raw",
    "mean raw", "best known", "gap", "it→99%", "evals", "failed it/runs", "tokens", "cost",
)  # fmt: skip
RANK_COLUMNS = ("scaffold", "mean rank", "tasks ranked")
_TEXT = ("task", "scaffold", "metric")


def sorted_rows(table: dict[str, Any]) -> list[dict[str, Any]]:
    return sorted(table["rows"], key=lambda r: (r["task"], r["rank"] or 1e9, r["scaffold"]))


def _mean(row: dict[str, Any]) -> str:
    if row["mean"] is None:
        return "-"
    if row["seeds"] < 2:
        return sig(row["mean"])
    return f"{sig(row['mean'])} ± {spread(row['std'], row['mean'])}"


def cells(row: dict[str, Any]) -> list[str]:
    """One row's cells, in :data:`COLUMNS` order."""
    ci = "-" if row["ci_low"] is None else f"[{sig(row['ci_low'])}, {sig(row['ci_high'])}]"
    metric = row.get("raw_metric")
    arrow = "↓" if row.get("direction") == "minimize" else "↑"
    return [
        row["task"],
        row["scaffold"],
        str(row["rank"] or "-"),
        sig(row["best"]),
        _mean(row),
        ci,
        str(row["seeds"]),
        f"{metric} {arrow}" if metric else "-",
        sig(row.get("best_raw")),
        sig(row.get("mean_raw")),
        sig(row["best_known"]),
        "-" if row["gap"] is None else f"{100 * row['gap']:.1f}%",
        "-" if row["iterations_to_99"] is None else f"{row['iterations_to_99']:.1f}",
        str(row["evaluations"]),
        f"{row['failed_iterations']}/{row['failed_runs']}",
        str(row["tokens"]),
        f"{row['cost']:.4f}",
    ]


def rank_cells(table: dict[str, Any]) -> list[list[str]]:
    ordered = sorted(table["scaffolds"], key=lambda s: (s["mean_rank"] or 1e9, s["scaffold"]))
    return [
        [
            s["scaffold"],
            "-" if s["mean_rank"] is None else f"{s['mean_rank']:.2f}",
            str(s["tasks_ranked"]),
        ]
        for s in ordered
    ]


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def markdown(table: dict[str, Any]) -> str:
    """The table in GitHub Markdown, its provenance line first (the offline note in bold)."""
    source = table["provenance"]
    line = source["line"]
    if source["note"]:
        line = line.replace(source["note"], f"**{source['note']}**")
    out = [f"> {_md_escape(line)}", ""]
    out.append("| " + " | ".join(COLUMNS) + " |")
    out.append("|" + "|".join("---" if c in _TEXT else "---:" for c in COLUMNS) + "|")
    for row in sorted_rows(table):
        out.append("| " + " | ".join(_md_escape(c) for c in cells(row)) + " |")
    out += ["", "| " + " | ".join(RANK_COLUMNS) + " |", "|---|---:|---:|"]
    out += ["| " + " | ".join(_md_escape(c) for c in r) + " |" for r in rank_cells(table)]
    return "\n".join(out) + "\n"


_TEX = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "±": r"$\pm$", "×": r"$\times$", "→": r"$\to$", "↑": r"$\uparrow$", "↓": r"$\downarrow$",
    "—": "---", "·": r"$\cdot$",
}  # fmt: skip


def _tex(text: str) -> str:
    return "".join(_TEX.get(ch, ch) for ch in text)


def latex(table: dict[str, Any]) -> str:
    """The table as a LaTeX ``table`` (booktabs), the provenance line as its caption."""
    align = "".join("l" if c in _TEXT else "r" for c in COLUMNS)
    out = [
        "% needs \\usepackage{booktabs}",
        "\\begin{table}[t]",
        "\\centering",
        "\\small",
        f"\\caption{{{_tex(table['provenance']['line'])}}}",
        f"\\begin{{tabular}}{{{align}}}",
        "\\toprule",
        " & ".join(_tex(c) for c in COLUMNS) + " \\\\",
        "\\midrule",
    ]
    out += [" & ".join(_tex(c) for c in cells(row)) + " \\\\" for row in sorted_rows(table)]
    out += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    return "\n".join(out) + "\n"
