"""The docs cannot drift from the code: every `galapagos …` command shown in README.md and
docs/ parses against the real CLI, the configuration reference is the generated one, and every
relative link points at a file that exists."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import typer.main

from harness.cli import app
from harness.config_reference import DOC, render

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)


def _commands(text: str) -> list[str]:
    """``galapagos`` command lines in shell/console fences (continuations joined)."""
    found = []
    for lang, body in FENCE.findall(text):
        if lang not in ("bash", "sh", "console", "shell", ""):
            continue
        joined = re.sub(r"\\\n\s*", " ", body)
        for line in joined.splitlines():
            line = line.strip().removeprefix("$ ").strip()
            line = re.split(r"\s+#\s", line, maxsplit=1)[0].strip()
            if "[--" in line:
                continue  # a usage synopsis ([--json] [--sandbox docker|local]), not a command
            for part in re.split(r"\s*(?:&&|\|\||\||;)\s*", line):
                part = re.split(r"\s+\d?>", part, maxsplit=1)[0].strip()  # drop redirections
                if part.startswith("galapagos ") and "…" not in part and "..." not in part:
                    found.append(part)
    return found


def _parse(command: str) -> None:
    """Parse ``command`` through the command tree without running it (raises
    :class:`typer.TyperException` on bad usage; typer 0.29 vendors its own click)."""
    args = shlex.split(command)[1:]
    cmd: Any = typer.main.get_command(app)
    ctx = cmd.make_context("galapagos", list(args), resilient_parsing=False)
    while hasattr(cmd, "get_command"):
        # click keeps the subcommand and its arguments apart from the group's own options.
        remaining = [*getattr(ctx, "_protected_args", []), *ctx.args]
        if not remaining:
            break
        name, *rest = remaining
        sub = cmd.get_command(ctx, name)
        if sub is None:
            raise typer.BadParameter(f"no command {name!r}")
        cmd, ctx = sub, sub.make_context(name, rest, parent=ctx)


CASES = [(page, cmd) for page in PAGES for cmd in _commands(page.read_text())]


def test_the_docs_show_commands() -> None:
    assert len(CASES) >= 20  # the extractor works (a test that parses nothing proves nothing)


@pytest.mark.parametrize(("page", "command"), CASES, ids=[f"{p.name}:{c[:60]}" for p, c in CASES])
def test_every_command_in_the_docs_parses(page: Path, command: str) -> None:
    try:
        _parse(command)
    except typer.Exit:
        pass  # --help / --version
    except typer.TyperException as exc:
        pytest.fail(f"{page.name}: `{command}` does not parse: {exc}")


def test_the_configuration_reference_is_current() -> None:
    assert DOC.read_text() == render(), (
        "docs/configuration.md is stale: run python -m harness.config_reference --write"
    )


def test_relative_links_point_at_files() -> None:
    broken = []
    for page in PAGES:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert broken == []


def test_the_parser_refuses_a_bad_command() -> None:
    with pytest.raises(typer.TyperException):
        _parse("galapagos run --no-such-flag")
    with pytest.raises(typer.TyperException):
        _parse("galapagos nope")
