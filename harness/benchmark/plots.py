"""Leaderboard figures (matplotlib, no display): best-so-far curves per task, and a heat map.

- ``curves_<task>.svg/.png``: per scaffold, the mean over seeds of the best score after each
  iteration, with a band of ± one standard deviation (min–max would hide nothing more with
  few seeds and be dominated by one run with more), and the task's best-known score as a
  dashed line when it is known;
- ``heatmap.svg/.png``: scaffold × task, each cell the mean best score as a fraction of the
  task's best known (the score itself when none is known), with the rank written in it (``=``
  when it ties: overlapping 95 % bootstrap intervals).

Every figure carries the table's provenance line at its foot, and the offline model's "not a
method result" in red at its top.
"""

from __future__ import annotations

import math
import re
import textwrap
from pathlib import Path
from typing import Any

from harness.core.errors import ConfigError

__all__ = ["write_plots"]


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        # SVG text stays text (editable in a paper's figure, searchable), not glyph outlines.
        matplotlib.rcParams["svg.fonttype"] = "none"
        import matplotlib.pyplot as plt
        from matplotlib.ticker import MaxNLocator
    except ImportError as exc:  # a dependency of the distribution; say how to get it back
        raise ConfigError(
            "--plots needs matplotlib, which is missing; reinstall galapagos "
            "(pip install galapagos) or pip install matplotlib"
        ) from exc
    return plt, MaxNLocator


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "task"


def _mean_std(series: list[list[float | None]]) -> tuple[list[float], list[float], list[float]]:
    length = max(len(s) for s in series)
    xs, means, stds = [], [], []
    for i in range(length):
        values = [s[i] for s in series if i < len(s) and s[i] is not None]
        if not values:
            continue
        mean = sum(v for v in values if v is not None) / len(values)
        var = sum((v - mean) ** 2 for v in values if v is not None) / max(1, len(values) - 1)
        xs.append(float(i))
        means.append(mean)
        stds.append(math.sqrt(var) if len(values) > 1 else 0.0)
    return xs, means, stds


def write_plots(
    table: dict[str, Any], curves: dict[str, dict[str, list[list[float | None]]]], folder: Path
) -> list[Path]:
    """Write every figure into ``folder``; returns the files written."""
    plt, MaxNLocator = _pyplot()  # noqa: N806 - matplotlib's class
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"--plots {folder}: cannot create it ({exc.strerror or exc})") from exc
    written: list[Path] = []
    known = {r["task"]: r["best_known"] for r in table["rows"]}
    for task in table["matrix"]["tasks"]:
        by_scaffold = curves.get(task, {})
        if not by_scaffold:
            continue
        fig, ax = plt.subplots(figsize=(8.5, 4.2), dpi=110)
        for scaffold in table["matrix"]["scaffolds"]:
            series = by_scaffold.get(scaffold)
            if not series:
                continue
            xs, means, stds = _mean_std(series)
            if not xs:
                continue
            (line,) = ax.step(
                xs, means, where="post", label=f"{scaffold} (n={len(series)})", linewidth=1.8
            )
            lower = [m - s for m, s in zip(means, stds, strict=True)]
            upper = [m + s for m, s in zip(means, stds, strict=True)]
            ax.fill_between(
                xs, lower, upper, step="post", color=line.get_color(), alpha=0.18, linewidth=0
            )
        target = known.get(task)
        if target is not None:
            low, high = ax.get_ylim()
            if low - (high - low) <= target <= high + (high - low):
                ax.axhline(target, color="black", linestyle="--", linewidth=1, label="best known")
            else:  # a line far away would flatten every curve: name the value instead
                ax.plot([], [], " ", label=f"best known {target:.4f} (off the axis)")
        ax.set_title(f"{task}: best score so far (mean ± std over seeds)", fontsize=10)
        ax.set_xlabel("iteration")
        ax.set_ylabel("best score")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
        _caption(fig, table)
        written += _save(fig, folder / f"curves_{_slug(task)}")
        plt.close(fig)
    written += _heatmap(plt, table, folder)
    return written


def _heatmap(plt: Any, table: dict[str, Any], folder: Path) -> list[Path]:
    scaffolds, tasks = table["matrix"]["scaffolds"], table["matrix"]["tasks"]
    if not scaffolds or not tasks:
        return []
    rows = {(r["scaffold"], r["task"]): r for r in table["rows"]}
    ties: dict[tuple[str, Any], int] = {}
    for r in table["rows"]:
        if r["rank"]:
            ties[(r["task"], r["rank"])] = ties.get((r["task"], r["rank"]), 0) + 1
    grid: list[list[float]] = []
    for scaffold in scaffolds:
        line = []
        for task in tasks:
            r = rows[(scaffold, task)]
            if r["mean"] is None:
                line.append(math.nan)
            elif r["best_known"]:
                line.append(r["mean"] / r["best_known"])
            else:
                line.append(r["mean"])
        grid.append(line)
    width = max(6.0, 0.9 * len(tasks) + 2.5)
    height = max(2.5, 0.55 * len(scaffolds) + 2.2)
    fig, ax = plt.subplots(figsize=(width, height), dpi=110)
    image = ax.imshow(grid, cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(tasks)), labels=tasks, rotation=35, ha="right", fontsize=8)
    ax.set_yticks(range(len(scaffolds)), labels=scaffolds, fontsize=8)
    for y, scaffold in enumerate(scaffolds):
        for x, task in enumerate(tasks):
            r = rows[(scaffold, task)]
            if r["mean"] is None:
                text = "–"
            else:
                tie = "=" if ties.get((task, r["rank"]), 0) > 1 else ""
                text = f"{grid[y][x]:.3f}" + (f"\n#{r['rank']}{tie}" if r["rank"] else "")
            value = grid[y][x]
            light = not math.isnan(value) and value < _midpoint(grid)
            ax.text(x, y, text, ha="center", va="center", fontsize=7,
                    color="white" if light else "black")  # fmt: skip
    fig.colorbar(image, ax=ax, label="mean best / best known")
    ax.set_title(
        f"{table['benchmark']}: mean best score as a fraction of the best known", fontsize=10
    )
    _caption(fig, table)
    written = _save(fig, folder / "heatmap")
    plt.close(fig)
    return written


def _caption(fig: Any, table: dict[str, Any]) -> None:
    """The provenance line at the figure's foot; the offline model's note in red at its top."""
    source = table["provenance"]
    # About 18 characters of 6-point text per inch of figure width.
    lines = textwrap.wrap(source["line"], width=int(fig.get_figwidth() * 18))
    fig.text(0.01, 0.01, "\n".join(lines), fontsize=6, color="dimgrey", va="bottom")
    bottom = 0.03 + 0.022 * len(lines)
    top = 1.0
    if source["offline"]:
        fig.text(
            0.5, 0.995, "OFFLINE MODEL — NOT A METHOD RESULT", fontsize=9, color="red",
            ha="center", va="top", weight="bold",
        )  # fmt: skip
        top = 0.95
    fig.tight_layout(rect=(0, min(bottom, 0.4), 1, top))


def _midpoint(grid: list[list[float]]) -> float:
    values = [v for line in grid for v in line if not math.isnan(v)]
    return (min(values) + max(values)) / 2 if values else 0.0


def _save(fig: Any, stem: Path) -> list[Path]:
    out = []
    for suffix in (".svg", ".png"):
        path = stem.with_suffix(suffix)
        fig.savefig(path, metadata={"Date": None} if suffix == ".svg" else None)
        out.append(path)
    return out
