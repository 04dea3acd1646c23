"""``galapagos serve`` and ``galapagos token create|list|revoke``: the self-hosted hub."""

from __future__ import annotations

import logging
from pathlib import Path
from types import FrameType
from typing import Annotated, Any

import typer
from rich.table import Table

from harness.cli._output import StoreOpt, err, guard, out, print_json
from harness.core.errors import ConfigError
from harness.store.sqlite import SQLiteStore, default_store_path

__all__ = ["register", "token_app"]

token_app = typer.Typer(
    help="API tokens of the hub (stored hashed; the clear text is shown once).",
    no_args_is_help=True,
)


def _db(store: Path | None) -> Any:
    from harness.service._db import ServiceDB

    path = store or default_store_path()
    SQLiteStore(path).close()  # creates and migrates the store the tokens live in
    return ServiceDB(path)


@token_app.command("create")
@guard
def token_create(
    name: Annotated[str, typer.Argument(help="A name for the token (who or what uses it).")],
    store: StoreOpt = None,
) -> None:
    """Make a token; it is printed once on stdout and only its hash is kept."""
    token = _db(store).create_token(name)
    err.print(f"token {name!r} created; store it now, it is not shown again", soft_wrap=True)
    typer.echo(token)


@token_app.command("list")
@guard
def token_list(
    store: StoreOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON on stdout.")] = False,
) -> None:
    """List tokens (names, ids, when made and last used; never the tokens)."""
    rows = [
        {
            "name": t.name,
            "id": t.id,
            "created_at": t.created_at,
            "last_used_at": t.last_used_at,
            "revoked": not t.active,
        }
        for t in _db(store).tokens()
    ]
    if as_json:
        print_json(rows)
        return
    table = Table("name", "id", "created", "last used", "state", box=None)
    for row in rows:
        table.add_row(
            row["name"],
            row["id"],
            _when(row["created_at"]),
            _when(row["last_used_at"]),
            "revoked" if row["revoked"] else "active",
        )
    out.print(table)


@token_app.command("revoke")
@guard
def token_revoke(
    name: Annotated[str, typer.Argument(help="The token's name or id.")],
    store: StoreOpt = None,
) -> None:
    """Revoke a token: it stops working at once (browsers logged in with it too)."""
    info = _db(store).revoke_token(name)
    err.print(f"token {info.name!r} ({info.id}) revoked")


def _when(value: float | None) -> str:
    import time

    return time.strftime("%Y-%m-%d %H:%M", time.localtime(value)) if value else "-"


@guard
def serve(
    host: Annotated[
        str, typer.Option("--host", help="Address to bind (other than loopback needs a token).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", "-p", min=0, max=65535)] = 8000,
    store: StoreOpt = None,
    task_root: Annotated[
        list[Path] | None,
        typer.Option("--task-root", help="A folder of task folders the hub may run (repeatable)."),
    ] = None,
    read: Annotated[
        str | None,
        typer.Option(
            "--read",
            help="public: pages and read API without a token; private: a token for everything "
            "(default: public on loopback, private elsewhere).",
        ),
    ] = None,
    workers: Annotated[int, typer.Option("--workers", min=1, max=64, help="Runs at once.")] = 2,
    api_base: Annotated[
        str | None, typer.Option("--api-base", help="OpenAI-compatible endpoint for runs.")
    ] = None,
    model: Annotated[
        list[str] | None, typer.Option("--model", "-m", help="Model name (repeatable).")
    ] = None,
    allow_local_sandbox: Annotated[
        bool,
        typer.Option(
            "--allow-local-sandbox",
            help="Let runs use evaluator.sandbox=local (host subprocesses: UNSAFE).",
        ),
    ] = False,
    max_body: Annotated[
        int, typer.Option("--max-body", min=1024, help="Largest request body in bytes (413).")
    ] = 1 << 20,
    secure_cookies: Annotated[
        bool, typer.Option("--secure-cookies", help="Mark cookies Secure (behind HTTPS).")
    ] = False,
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray-address",
            envvar="GALAPAGOS_RAY_ADDRESS",
            help="Run the queue on this Ray cluster's nodes (needs galapagos[ray]; see "
            "docs/scale-out.md).",
        ),
    ] = None,
) -> None:
    """Serve the hub: API, live runs, lineage, leaderboard and playground in the browser."""
    import uvicorn

    from harness.service import ServiceSettings, create_app, is_loopback
    from harness.service._db import ServiceDB

    path = store or default_store_path()
    writer = SQLiteStore(path)
    tokens = ServiceDB(path).active_tokens()
    loopback = is_loopback(host)
    if not loopback and tokens == 0:
        raise ConfigError(
            f"--host {host} makes the hub reachable from other machines, and no token exists; "
            "create one first (galapagos token create NAME), or bind 127.0.0.1"
        )
    if read not in (None, "public", "private"):
        raise ConfigError(f"--read {read!r}: give public or private")
    for root in task_root or []:
        if not root.is_dir():
            raise ConfigError(f"--task-root {root}: not a folder")
    settings = ServiceSettings(
        task_roots=tuple(task_root or ()),
        public_read=(read or ("public" if loopback else "private")) == "public",
        workers=workers,
        max_body_bytes=max_body,
        allow_local_sandbox=allow_local_sandbox,
        api_base=api_base,
        models=tuple(m for item in (model or []) for m in item.split(",") if m.strip()),
        secure_cookies=secure_cookies,
        ray_address=ray_address,
    )
    app = create_app(writer, settings)
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    hub_log = logging.getLogger("galapagos")
    hub_log.addHandler(handler)
    hub_log.setLevel(logging.INFO)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        timeout_graceful_shutdown=2,
        log_level="info",
        proxy_headers=False,
    )
    server = _make_server(config, app.state.hub)
    reads = "public" if settings.public_read else "private (token needed)"
    err.print(
        f"hub on http://{host}:{port}  store {path}  reads {reads}  {tokens} active token(s)",
        soft_wrap=True,
    )
    if tokens == 0:
        err.print("no token yet: the hub is read-only until `galapagos token create NAME`")
    server.run()


def _make_server(config: Any, hub: Any) -> Any:
    """uvicorn's server, told to end live streams the moment a stop signal arrives (else an
    open event stream holds the graceful shutdown until its client leaves)."""
    import uvicorn

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            hub.live.close()
            super().handle_exit(sig, frame)

    return Server(config)


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
    app.add_typer(token_app, name="token")
