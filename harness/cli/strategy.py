"""``galapagos strategy …`` commands: ``strategy validate``, the EvoX pre-filter + Valid(·)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from rich.markup import escape

from harness.cli._output import (
    HELP_MARKUP,
    err,
    guard,
    out,
    print_json,
    run_terminable,
    status_word,
)
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
    deadline: Annotated[
        float,
        typer.Option(
            "--deadline",
            min=10,
            max=3600,
            help="Seconds the whole validation may take (sandbox start and removal included).",
        ),
    ] = 180.0,
) -> None:
    """Run the static pre-filter and Valid(·) on a strategy, printing one line per check.
    Exit 0 when every check passes, 1 when one fails, 2 for an unreadable file; SIGTERM and
    Ctrl-C remove the sandbox before exiting (143, 130)."""
    source = _read(file)  # bad input fails before anything starts
    from dataclasses import replace

    from scaffolds.evox.factory import make_factory
    from scaffolds.evox.labels import default_labels
    from scaffolds.evox.prefilter import prefilter
    from scaffolds.evox.valid import ValidConfig
    from strategy_tests import validate_source

    config = replace(ValidConfig(), stress_programs=stress, deadline_s=deadline)
    factory = make_factory(sandbox)
    err.print(f"validating {file} in the {sandbox} sandbox …")
    try:
        report = run_terminable(
            validate_source(
                source,
                clients=lambda: factory.client(config.limits),
                labels=default_labels(),
                config=config,
                gate=None if no_prefilter else prefilter,
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
        if report.resources:
            err.print(escape(_resources_line(report.resources)), soft_wrap=True)
    if not report.passed:
        failed = report.failure
        err.print(f"[bold red]strategy rejected:[/] {failed.name if failed else 'not run'}")
        raise typer.Exit(code=1)


def _resources_line(res: dict[str, Any]) -> str:
    """The judge's readings in one line: what the sandbox was allowed, what it used."""
    box = res.get("sandbox") or {}
    allowed = ", ".join(
        part
        for part in (
            f"{box['cpus']:g} CPU" if box.get("cpus") else "",
            f"{box['memory_mb']} MiB" if box.get("memory_mb") else "",
            f"pids {box['pids']}" if box.get("pids") else "",
        )
        if part
    )
    used = (
        f"peak memory {res.get('peak_memory_mb', '?')} MiB, peak tasks "
        f"{res.get('peak_tasks', '?')}, CPU {res.get('cpu_s', '?')} s over {res.get('calls', 0)} "
        "calls"
    )
    source = res.get("readings")
    return f"sandbox: {allowed or 'no limits known'}; used: {used} (read by the host: {source})"
