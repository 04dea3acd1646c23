"""The project's docs as pages: README.md and docs/*.md rendered with raw HTML switched off."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt

from harness.core.errors import RunNotFound

__all__ = ["api_reference", "markdown", "pages", "render_page"]

_md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


def markdown(text: str) -> str:
    """Markdown as HTML; any HTML in the source is shown as text, never interpreted."""
    return _md.render(text)


def _root(docs_dir: Path | None) -> Path:
    return docs_dir or Path(__file__).resolve().parents[2] / "docs"


def pages(docs_dir: Path | None) -> list[dict[str, str]]:
    root = _root(docs_dir)
    out = []
    readme = root.parent / "README.md"
    if readme.is_file():
        out.append({"name": "readme", "title": "README"})
    if root.is_dir():
        for path in sorted(root.glob("*.md")):
            if _NAME.fullmatch(path.stem):
                out.append({"name": path.stem, "title": _title(path)})
    return out


def _title(path: Path) -> str:
    for line in path.read_text().splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return path.stem


def render_page(docs_dir: Path | None, name: str) -> str:
    known = {p["name"] for p in pages(docs_dir)}
    if name not in known:
        raise RunNotFound(f"no docs page {name[:64]!r}; see /docs")
    root = _root(docs_dir)
    path = root.parent / "README.md" if name == "readme" else root / f"{name}.md"
    html = markdown(path.read_text())
    # Links between pages (docs/x.md, ../README.md) point at their /docs/ pages.
    html = re.sub(
        r'href="(?:docs/|\./)?([A-Za-z0-9_-]+)\.md(#[^"]*)?"',
        lambda m: f'href="/docs/{m.group(1)}{m.group(2) or ""}"',
        html,
    )
    html = html.replace('href="../README.md"', 'href="/docs/readme"')
    html = html.replace('src="images/', 'src="/docs/images/')
    return html.replace('href="/docs/README"', 'href="/docs/readme"')


def image(docs_dir: Path | None, name: str) -> Path:
    """A PNG of docs/images/ by its plain name (nothing else is served from there)."""
    folder = _root(docs_dir) / "images"
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}\.png", name) or not (folder / name).is_file():
        raise RunNotFound(f"no docs image {name[:64]!r}")
    return folder / name


def api_reference(spec: dict[str, Any]) -> list[dict[str, str]]:
    """One row per API operation, from the OpenAPI document."""
    rows = []
    for path, methods in sorted(spec.get("paths", {}).items()):
        for method, op in methods.items():
            rows.append(
                {
                    "method": method.upper(),
                    "path": path,
                    "summary": op.get("summary", ""),
                    "description": (op.get("description") or "").split("\n")[0],
                }
            )
    return rows
