"""``galapagos serve --tls-cert/--tls-key``: the hub speaks HTTPS, and its cookies are
``Secure`` without being told (a real server with a self-signed certificate, on loopback)."""

from __future__ import annotations

import ssl
import subprocess
from pathlib import Path

import httpx
import pytest

from harness.service._db import ServiceDB
from harness.store.sqlite import SQLiteStore
from tests.service.conftest import ServerProcess, hostile_task_root

pytestmark = pytest.mark.slow


def _certificate(folder: Path) -> tuple[Path, Path]:
    cert, key = folder / "hub.pem", folder / "hub.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


def test_the_hub_serves_https_with_secure_cookies(tmp_path: Path) -> None:
    store = tmp_path / "hub.sqlite"
    SQLiteStore(store).close()
    token = ServiceDB(store).create_token("t")
    cert, key = _certificate(tmp_path)
    server = ServerProcess(
        store, hostile_task_root(tmp_path), "--tls-cert", str(cert), "--tls-key", str(key)
    ).start()
    try:
        assert server.url.startswith("https://")
        trust = ssl.create_default_context(cafile=str(cert))
        with httpx.Client(base_url=server.url, verify=trust, timeout=30) as c:
            page = c.get("/login")
            assert page.status_code == 200
            assert "secure" in page.headers["set-cookie"].lower()
            csrf = c.cookies.get("galapagos_csrf")
            r = c.post("/login", data={"token": token, "csrf": csrf}, follow_redirects=False)
            assert r.status_code == 303
            cookie = r.headers["set-cookie"].lower()
            assert "galapagos_session=" in cookie and "secure" in cookie and "httponly" in cookie
        with pytest.raises(httpx.HTTPError):  # plain HTTP is not spoken on that port
            httpx.get(server.url.replace("https://", "http://") + "/api/v1/status", timeout=5)
    finally:
        server.stop()
