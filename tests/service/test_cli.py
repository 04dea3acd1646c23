"""``galapagos token create|list|revoke`` and the refusals of ``galapagos serve``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.service._db import ServiceDB
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
