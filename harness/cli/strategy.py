"""``galapagos strategy …`` commands: ``strategy validate``, the EvoX pre-filter + Valid(·)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.markup import escape

from harness.cli._output import HELP_MARKUP, err, guard, out, print_json, status_word
from harness.core.errors import ConfigError

app = typer.Typer(
    help="Validate an EvoX search strategy: the static pre-filter, then Valid(·) in a sandbox.",
    no_args_is_help=True,
    rich_markup_mode=HELP_MARKUP,
)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ConfigError(f"strategy file {path} does not exist") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read strategy file {path} as UTF-8 text: {exc}") from exc


@app.command("validate")
@guard
def validate(
    file: Annotated[Path, typer.Argument(help="A strategy module (EvolvedProgramDatabase).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    sandbox: Annotated[
        Literal["docker", "local"],
        typer.Option(
            "--sandbox",
            help="docker (default) or local (a host subprocess: UNSAFE "
            "for code you did not write).",
        ),
    ] = "docker",
    stress: Annotated[
        int,
        typer.Option(
            "--stress", min=10, max=100_000, help="Programs added one by one in the stress check."
        ),
    ] = 1000,
    no_prefilter: Annotated[
        bool, typer.Option("--no-prefilter", help="Skip the static pre-filter.")
    ] = False,
) -> None:
    """Run the static pre-filter and Valid(·) on a strategy, printing one line per check.
    Exit 0 when every check passes, 1 when one fails, 2 for an unreadable file."""
    source = _read(file)  # bad input fails before anything starts
    from dataclasses import replace

    from harness.evox.labels import default_labels
    from harness.evox.sandbox import make_factory
    from strategy_tests import ValidConfig, validate_source

    factory = make_factory(sandbox)
    err.print(f"validating {file} in the {sandbox} sandbox …")
    try:
        report = asyncio.run(
            validate_source(
                source,
                factory=factory,
                labels=default_labels(),
                config=replace(ValidConfig(), stress_programs=stress),
                use_prefilter=not no_prefilter,
            )
        )
    finally:
        factory.close()
    if as_json:
        print_json(report.to_dict())
    else:
        for check in report.checks:
            origin = "" if check.reference else " (galapagos)"
            out.print(
                f"{status_word(check.status)} {check.name:22} {escape(check.detail)}{origin}",
                soft_wrap=True,
            )
        passed = sum(c.status == "pass" for c in report.checks)
        out.print(f"{passed} of {len(report.checks)} checks passed")
    if not report.passed:
        failed = report.failure
        err.print(f"[bold red]strategy rejected:[/] {failed.name if failed else 'not run'}")
        raise typer.Exit(code=1)
