"""``galapagos task …`` commands: ``task check``, the CI gate for task evaluators."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.markup import escape

from harness.cli._output import HELP_MARKUP, err, guard, out, print_json, status_word
from harness.evaluation.check import CheckReport, CheckResult, check_task
from harness.evaluation.task import load_task

app = typer.Typer(
    help="Check a task's evaluator before searching with it (the CI gate for task folders).",
    no_args_is_help=True,
    rich_markup_mode=HELP_MARKUP,
)


def _line(check: CheckResult) -> str:
    return f"{status_word(check.status)} {check.name:30} {escape(check.detail)}"


async def _check(
    path: str, sandbox: str, runs: int, show: bool, task_config: str | None
) -> CheckReport:
    # A bad folder, card or folder config is bad input: exit 2 before any sandbox.
    task = load_task(path, config_file=task_config)
    from harness.sandbox import make_backend

    err.print(f"checking task {task.name} ({task.card.mode}) in the {sandbox} sandbox …")
    # Each check varies the job shape every ~20 jobs, so a warm pool would start containers
    # that nothing uses: cold containers are cheaper here.
    backend = make_backend(sandbox, pool_size=0) if sandbox == "docker" else make_backend(sandbox)
    try:
        return await check_task(
            task,
            backend,
            runs=runs,
            # Human mode streams each check to stdout as it finishes (it is the data).
            progress=(lambda c: out.print(_line(c), soft_wrap=True)) if show else None,
        )
    finally:
        await backend.aclose()


@app.command("check")
@guard
def check(
    path: Annotated[str, typer.Argument(help="Task folder (native or OpenEvolve-style) or name.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    sandbox: Annotated[
        Literal["docker", "local"],
        typer.Option(
            "--sandbox",
            help="docker (default) or local (host subprocesses: UNSAFE, and the isolation "
            "checks are skipped).",
        ),
    ] = "docker",
    runs: Annotated[
        int, typer.Option("--runs", min=2, max=10, help="Seed runs compared for determinism.")
    ] = 3,
    task_config: Annotated[
        str | None,
        typer.Option(
            "--task-config",
            help="A compat task folder's config file to use (default: its config.yaml), e.g. "
            "OpenEvolve's config_phase_1.yaml.",
        ),
    ] = None,
) -> None:
    """Check that a task's evaluator is sound: card, seed, determinism, broken and lying
    candidates.  Exit 0 when no check fails, 1 when one does, 2 for a bad task folder."""
    if Path(path).is_file():
        path = str(Path(path).parent)
    report = asyncio.run(_check(path, sandbox, runs, show=not as_json, task_config=task_config))
    if as_json:
        print_json(report.to_dict())
    else:
        out.print(
            f"{report.count('pass')} passed, {report.count('fail')} failed, "
            f"{report.count('skip')} skipped"
        )
        failed = [c.name for c in report.checks if c.status == "fail"]
        if failed:
            err.print(f"[bold red]task check failed:[/] {', '.join(failed)}")
    if not report.ok:
        raise typer.Exit(code=1)
