"""``galapagos token create|list|revoke`` and the refusals of ``galapagos serve``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.service._db import ServiceDB
from harness.store.sqlite import SQLiteStore
from tests.cli.helpers import galapagos


@pytest.mark.slow
def test_token_create_list_revoke(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    made = galapagos("token", "create", "laptop", "--store", str(store))
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip()
    assert token.startswith("gal_") and "not shown again" in made.stderr
    assert ServiceDB(store).check_token(token) is not None
    assert token.split("_", 2)[2] not in store.read_bytes().decode("latin-1")  # only a hash
    listed = json.loads(galapagos("token", "list", "--json", "--store", str(store)).stdout)
    assert [(t["name"], t["revoked"]) for t in listed] == [("laptop", False)]
    again = galapagos("token", "create", "laptop", "--store", str(store))
    assert again.returncode == 2 and "already exists" in again.stderr
    bad = galapagos("token", "create", "no spaces", "--store", str(store))
    assert bad.returncode == 2
    assert galapagos("token", "revoke", "laptop", "--store", str(store)).returncode == 0
    assert ServiceDB(store).check_token(token) is None
    assert galapagos("token", "revoke", "laptop", "--store", str(store)).returncode == 2


@pytest.mark.slow
def test_serve_refuses_a_public_address_without_a_token(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    proc = galapagos("serve", "--host", "0.0.0.0", "--store", str(store))
    assert proc.returncode == 2
    assert "no token exists" in proc.stderr and "galapagos token create" in proc.stderr
    proc = galapagos("serve", "--read", "sometimes", "--store", str(store))
    assert proc.returncode == 2 and "--read" in proc.stderr


def test_serve_beyond_loopback_needs_tls_or_an_acknowledgement(tmp_path: Path) -> None:
    """Finding: ``serve --host 0.0.0.0`` started over plain HTTP without a word about TLS.
    Each refusal comes before anything is bound."""
    store = tmp_path / "s.sqlite"
    ServiceDB(_init(store)).create_token("ops")
    base = ["serve", "--host", "0.0.0.0", "--port", "1", "--store", str(store)]
    cli = CliRunner()
    proc = cli.invoke(app, base)
    assert proc.exit_code == 2
    assert "--tls-cert" in proc.stderr and "--plain-http" in proc.stderr
    proc = cli.invoke(app, [*base, "--plain-http"])
    assert proc.exit_code == 2 and "--public-name" in proc.stderr
    proc = cli.invoke(app, [*base, "--tls-cert", str(store)])
    assert proc.exit_code == 2 and "--tls-key" in proc.stderr
    proc = cli.invoke(app, [*base, "--tls-cert", "nope.pem", "--tls-key", "nope.key"])
    assert proc.exit_code == 2 and "no such file" in proc.stderr


def test_token_scopes_and_lifetimes_from_the_cli(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    cli = CliRunner()
    made = cli.invoke(
        app, ["token", "create", "ci", "--scope", "read", "--expires", "2h", "--store", str(store)]
    )
    assert made.exit_code == 0 and "scope read" in made.stderr, made.stderr
    info = ServiceDB(store).check_token(made.stdout.strip())
    assert info is not None and info.scope == "read" and info.expires_at is not None
    listed = json.loads(cli.invoke(app, ["token", "list", "--json", "--store", str(store)]).stdout)
    assert listed[0]["scope"] == "read" and listed[0]["expired"] is False
    bad = cli.invoke(app, ["token", "create", "x", "--scope", "root", "--store", str(store)])
    assert bad.exit_code == 2 and "read, launch, admin" in bad.stderr
    bad = cli.invoke(app, ["token", "create", "y", "--expires", "soon", "--store", str(store)])
    assert bad.exit_code == 2 and "--expires" in bad.stderr


def _init(store: Path) -> Path:
    SQLiteStore(store).close()
    return store
