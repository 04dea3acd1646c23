"""Red team in a real headless Chromium: a DNS-rebinding page reads nothing, a stolen session
cookie is worthless after logout, and an attacker's page cannot write through a logged-in
browser.

Chromium's ``--host-resolver-rules`` maps ``rebind.test`` to 127.0.0.1, as a rebinding
attacker's DNS would: the page is then same-origin with the hub under the attacker's name."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.service._db import ServiceDB
from harness.store.sqlite import SQLiteStore
from tests.service.conftest import ServerProcess, hostile_task_root, launch

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="module")
def chromium() -> Iterator[object]:
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is missing: scripts/bootstrap.sh installs it (apt chromium)")
        pytest.skip("chromium not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--host-resolver-rules=MAP rebind.test 127.0.0.1"],
        )
        yield b
        b.close()


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, str, str]]:
    tmp = tmp_path_factory.mktemp("browser-redteam")
    store = tmp / "hub.sqlite"
    SQLiteStore(store).close()
    token = ServiceDB(store).create_token("browser")
    server = ServerProcess(store, hostile_task_root(tmp)).start()
    import httpx

    with httpx.Client(base_url=server.url, timeout=30) as c:
        run_id = launch(c, {"Authorization": f"Bearer {token}"}, iterations=1)
    yield server, token, run_id
    server.stop()


def test_a_rebinding_page_reads_nothing(chromium, hub) -> None:  # type: ignore[no-untyped-def]
    server, _, run_id = hub
    page = chromium.new_page()
    # The attacker's page, served (as far as the browser knows) by rebind.test...
    response = page.goto(f"http://rebind.test:{server.port}/runs/{run_id}")
    assert response is not None and response.status == 400
    assert "not one of this hub's names" in page.content()  # the hub itself answered
    assert run_id not in page.content()
    # ...and what its script would fetch, same-origin under that name.
    status = page.evaluate("async (path) => (await fetch(path)).status", f"/api/v1/runs/{run_id}")
    assert status == 400
    page.close()


def test_a_logged_out_session_cookie_is_worthless(chromium, hub) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    server, token, _ = hub
    context = chromium.new_context()
    page = context.new_page()
    page.goto(server.url + "/login?next=/playground")
    page.fill("#token", token)
    page.click("#login-form button")
    expect(page.locator("#launch-button")).to_be_enabled()
    session = next(c for c in context.cookies() if c["name"] == "galapagos_session")
    assert session["httpOnly"] and session["sameSite"] == "Strict"
    assert token not in session["value"] and token.split("_", 2)[2] not in session["value"]
    page.click("button:has-text('log out')")
    expect(page.locator("#login-link")).to_be_visible()
    # Someone copied the cookie before the logout: it opens nothing now.
    thief = chromium.new_context()
    thief.add_cookies([{k: session[k] for k in ("name", "value", "domain", "path")}])
    stolen = thief.new_page()
    stolen.goto(server.url + "/playground")
    expect(stolen.locator("#launch-button")).to_be_disabled()
    expect(stolen.locator("#login-link")).to_be_visible()
    thief.close()
    context.close()
