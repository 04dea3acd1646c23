"""`galapagos sandbox …` commands: build images, check the sandbox, reap orphans.

Data goes to stdout (tab-separated, or JSON with ``--json``), messages to stderr; exit codes are
0 (fine), 1 (something is wrong at run time) and 2 (bad input).
"""

from __future__ import annotations

import json
from typing import Annotated

import typer

from harness.cli._output import HELP_MARKUP
from harness.core.errors import HarnessError

app = typer.Typer(
    help="Build sandbox images, check the sandbox, reap orphaned containers.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    rich_markup_mode=HELP_MARKUP,
)


def _fail(exc: HarnessError) -> typer.Exit:
    typer.echo(f"error: {exc}", err=True)
    return typer.Exit(exc.exit_code)


@app.command()
def build(
    images: Annotated[
        list[str] | None, typer.Argument(help="Images to build (default: all).")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Rebuild even if the tag exists.")] = False,
) -> None:
    """Build the sandbox images from sandbox_images/images.yaml (idempotent)."""
    from harness.sandbox.images import build_images

    try:
        tags = build_images(
            images or None, force=force, progress=lambda msg: typer.echo(msg, err=True)
        )
    except HarnessError as exc:
        raise _fail(exc) from exc
    for name, tag in tags.items():
        typer.echo(f"{name}\t{tag}")


@app.command()
def doctor(
    canaries: Annotated[
        bool, typer.Option(help="Run canary candidates in real containers.")
    ] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print the checks as JSON.")] = False,
) -> None:
    """Check the engine, images and limits, and run canary candidates; exit 1 if any fails."""
    from harness.sandbox.doctor import run_checks

    try:
        checks = run_checks(canaries=canaries)
    except HarnessError as exc:
        raise _fail(exc) from exc
    if as_json:
        typer.echo(json.dumps([c.__dict__ for c in checks], indent=2))
    else:
        for check in checks:
            typer.echo(f"{'ok' if check.ok else 'FAIL'}\t{check.name}\t{check.detail}")
    failed = [c for c in checks if not c.ok]
    for check in failed:
        typer.echo(f"error: {check.name}: {check.detail}; {check.remedy}", err=True)
    if failed:
        raise typer.Exit(1)


@app.command()
def gc(
    images: Annotated[
        bool,
        typer.Option("--images", help="Also delete galapagos images built from older recipes."),
    ] = False,
    run: Annotated[
        str | None,
        typer.Option(
            "--run",
            help="Also remove every container of this run id, even if its "
            "process is still alive (stops its evaluations).",
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print what was removed as JSON.")
    ] = False,
) -> None:
    """Remove containers whose owning process is dead (never those of live processes).

    Prints one line per removed container or image, then says on stderr what it did."""
    import docker
    import docker.errors
    import requests.exceptions

    from harness.sandbox.images import stale_images
    from harness.sandbox.ownership import reap_orphans, remove_run

    removed: dict[str, list[str]] = {"orphans": [], "run": [], "images": []}
    try:
        client = docker.from_env(timeout=120)
        removed["orphans"] = reap_orphans(client)
        if run:
            removed["run"] = remove_run(client, run)
        if images:
            for tag in stale_images(client):
                try:
                    client.images.remove(tag)
                    removed["images"].append(tag)
                except docker.errors.APIError as exc:  # still used by a container, say
                    typer.echo(f"warning: kept {tag}: {exc.explanation}", err=True)
    except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
        typer.echo(
            f"error: the Docker engine is not reachable ({exc}); start it with "
            "`bash scripts/docker-engine.sh`",
            err=True,
        )
        raise typer.Exit(1) from exc
    if as_json:
        typer.echo(json.dumps({"run_id": run, **removed}, indent=2))
    else:
        for name in removed["orphans"] + removed["run"]:
            typer.echo(f"container\t{name}")
        for tag in removed["images"]:
            typer.echo(f"image\t{tag}")
    typer.echo(_gc_summary(removed, run, images), err=True)


def _gc_summary(removed: dict[str, list[str]], run: str | None, images: bool) -> str:
    parts = [_count(len(removed["orphans"]), "container") + " whose owner process is dead"]
    if run:
        parts.append(_count(len(removed["run"]), "container") + f" of run {run}")
    if images:
        parts.append(_count(len(removed["images"]), "stale image"))
    return "removed " + "; ".join(parts)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
