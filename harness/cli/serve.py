"""``galapagos serve`` and ``galapagos token create|list|revoke``: the self-hosted hub."""

from __future__ import annotations

import logging
import time
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
    scope: Annotated[
        str,
        typer.Option(
            "--scope",
            help="read (pages and read API of a private hub), launch (also launch runs, "
            "cancel and resume its own) or admin (also any run's).",
        ),
    ] = "launch",
    expires: Annotated[
        str | None,
        typer.Option("--expires", help="Lifetime, e.g. 12h, 30d (default: until revoked)."),
    ] = None,
) -> None:
    """Make a token; it is printed once on stdout and only its hash is kept."""
    lifetime = parse_duration(expires, "--expires") if expires else None
    token = _db(store).create_token(name, scope=scope, expires_in_s=lifetime)
    until = f", expires {_when(time.time() + lifetime)}" if lifetime else ""
    err.print(
        f"token {name!r} created (scope {scope}{until}); store it now, it is not shown again",
        soft_wrap=True,
    )
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
            "scope": t.scope,
            "created_at": t.created_at,
            "last_used_at": t.last_used_at,
            "expires_at": t.expires_at,
            "revoked": t.revoked_at is not None,
            "expired": t.expired,
        }
        for t in _db(store).tokens()
    ]
    if as_json:
        print_json(rows)
        return
    table = Table("name", "id", "scope", "created", "last used", "expires", "state", box=None)
    for row in rows:
        state = "revoked" if row["revoked"] else "expired" if row["expired"] else "active"
        table.add_row(
            row["name"],
            row["id"],
            row["scope"],
            _when(row["created_at"]),
            _when(row["last_used_at"]),
            _when(row["expires_at"]),
            state,
        )
    out.print(table)


@token_app.command("revoke")
@guard
def token_revoke(
    name: Annotated[str, typer.Argument(help="The token's name or id.")],
    store: StoreOpt = None,
) -> None:
    """Revoke a token: it stops working at once (browsers logged in with it too: their
    sessions end)."""
    info = _db(store).revoke_token(name)
    err.print(f"token {info.name!r} ({info.id}) revoked")


def _when(value: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(value)) if value else "-"


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str, flag: str) -> float:
    """``90s``, ``15m``, ``12h``, ``30d`` (or plain seconds) as seconds above 0."""
    raw = text.strip().lower()
    unit = raw[-1:] if raw[-1:] in _UNITS else "s"
    number = raw[:-1] if raw[-1:] in _UNITS else raw
    try:
        value = float(number) * _UNITS[unit]
    except ValueError:
        value = -1
    if not (0 < value < 1e10):
        raise ConfigError(f"{flag} {text!r}: give a duration such as 90s, 15m, 12h or 30d")
    return value


@guard
def serve(
    host: Annotated[
        str,
        typer.Option(
            "--host",
            help="Address to bind. Beyond loopback it needs a token, --tls-cert/--tls-key (or "
            "--plain-http behind a TLS proxy) and, for a wildcard address, --public-name.",
        ),
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
        str | None,
        typer.Option(
            "--api-base",
            help="OpenAI-compatible endpoint for runs (credentials in it are kept "
            "out of the store, pages and logs).",
        ),
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
    public_name: Annotated[
        list[str] | None,
        typer.Option(
            "--public-name",
            help="A name the hub answers to besides loopback (its DNS name; repeatable). "
            "Requests naming another Host are refused.",
        ),
    ] = None,
    tls_cert: Annotated[
        Path | None, typer.Option("--tls-cert", help="TLS certificate (PEM): serve HTTPS.")
    ] = None,
    tls_key: Annotated[
        Path | None, typer.Option("--tls-key", help="TLS private key (PEM).")
    ] = None,
    plain_http: Annotated[
        bool,
        typer.Option(
            "--plain-http",
            help="Listen beyond loopback without TLS: only behind a proxy that terminates HTTPS, "
            "or on a network you trust (tokens and cookies cross it in clear).",
        ),
    ] = False,
    header_timeout: Annotated[
        float,
        typer.Option("--header-timeout", min=0.1, help="Seconds a client has to send a request."),
    ] = 10.0,
    idle_timeout: Annotated[
        int, typer.Option("--idle-timeout", min=1, help="Seconds an idle connection stays open.")
    ] = 5,
    max_queued: Annotated[
        int, typer.Option("--max-queued-per-token", min=1, help="Runs a token may have queued.")
    ] = 20,
    max_streams_per_client: Annotated[
        int, typer.Option("--max-streams-per-client", min=1, help="Live streams per client.")
    ] = 8,
    max_streams: Annotated[
        int, typer.Option("--max-streams", min=1, help="Live streams in all.")
    ] = 1000,
    session_ttl: Annotated[
        str, typer.Option("--session-ttl", help="A browser login lasts this long (e.g. 7d).")
    ] = "7d",
    session_idle: Annotated[
        str, typer.Option("--session-idle", help="...or ends after this long unused (e.g. 12h).")
    ] = "12h",
) -> None:
    """Serve the hub: API, live runs, lineage, leaderboard and playground in the browser."""
    import uvicorn

    from harness.service import ServiceSettings, create_app, is_loopback
    from harness.service._db import ServiceDB
    from harness.service._server import protocol, raise_fd_limit, redact_logs

    path = store or default_store_path()
    writer = SQLiteStore(path)
    tokens = ServiceDB(path).active_tokens()
    loopback = is_loopback(host)
    names = list(public_name or [])
    tls = _tls_files(tls_cert, tls_key)
    if not loopback:
        _check_public(host, tokens, tls, plain_http, names)
    if host not in ("0.0.0.0", "::"):
        names.append(host)  # the address it is bound to (127.0.0.2, a LAN address)
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
        ray_address=ray_address,
        secure_cookies=secure_cookies or tls is not None,
        public_names=tuple(names),
        max_queued_per_token=max_queued,
        max_streams_per_client=max_streams_per_client,
        max_streams=max_streams,
        session_ttl_s=parse_duration(session_ttl, "--session-ttl"),
        session_idle_s=parse_duration(session_idle, "--session-idle"),
    )
    app = create_app(writer, settings)
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    hub_log = logging.getLogger("galapagos")
    hub_log.addHandler(handler)
    hub_log.setLevel(logging.INFO)
    # Every connection is a file descriptor; streams are capped below the connection cap, and
    # pages keep answering with every stream slot taken.
    connections = max_streams + 256
    raise_fd_limit(connections + 256)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        http=protocol(header_timeout),
        timeout_keep_alive=idle_timeout,
        limit_concurrency=connections,
        timeout_graceful_shutdown=2,
        log_level="info",
        proxy_headers=False,
        ssl_certfile=str(tls[0]) if tls else None,
        ssl_keyfile=str(tls[1]) if tls else None,
    )
    redact_logs("uvicorn", "uvicorn.error", "uvicorn.access")
    handler.addFilter(_redacting())
    server = _make_server(config, app.state.hub)
    scheme = "https" if tls else "http"
    reads = "public" if settings.public_read else "private (token needed)"
    err.print(
        f"hub on {scheme}://{_shown_host(host)}:{port}  store {path}  reads {reads}  "
        f"{tokens} active token(s)",
        soft_wrap=True,
    )
    if not loopback:
        err.print(
            ("TLS: " + str(tls[0]) if tls else "plain HTTP (--plain-http): put a TLS proxy in "
             "front, or keep to a network you trust")
            + f"; answers to {', '.join(sorted(settings.allowed_hosts))}",
            soft_wrap=True,
        )  # fmt: skip
    if tokens == 0:
        err.print("no token yet: the hub is read-only until `galapagos token create NAME`")
    server.run()


def _tls_files(cert: Path | None, key: Path | None) -> tuple[Path, Path] | None:
    if (cert is None) != (key is None):
        raise ConfigError("give both --tls-cert and --tls-key (PEM files), or neither")
    if cert is None or key is None:
        return None
    for flag, file in (("--tls-cert", cert), ("--tls-key", key)):
        if not file.is_file():
            raise ConfigError(f"{flag} {file}: no such file")
    return cert, key


def _check_public(
    host: str, tokens: int, tls: tuple[Path, Path] | None, plain_http: bool, names: list[str]
) -> None:
    """Listening beyond loopback: a token must exist, and the operator must say how the
    traffic is protected and which name the hub answers to."""
    if tokens == 0:
        raise ConfigError(
            f"--host {host} makes the hub reachable from other machines, and no token exists; "
            "create one first (galapagos token create NAME), or bind 127.0.0.1"
        )
    if tls is None and not plain_http:
        raise ConfigError(
            f"--host {host} listens beyond this machine over plain HTTP: tokens and session "
            "cookies would cross the network in clear; give --tls-cert FILE --tls-key FILE, or "
            "--plain-http if a proxy in front terminates TLS (then add --secure-cookies)"
        )
    if host in ("0.0.0.0", "::") and not names:
        raise ConfigError(
            f"--host {host} listens on every address: say which name clients use, "
            "--public-name NAME (requests naming another Host are refused: DNS rebinding)"
        )


def _shown_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _redacting() -> logging.Filter:
    from harness.service._server import RedactingFilter

    return RedactingFilter()


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
