"""The hub in a real headless Chromium (Debian's, driven by Playwright): log in, build a
scaffold and launch it from the Playground, watch live progress arrive, open a program and
its diff, the lineage and the leaderboard; hostile program text stays text.

Screenshots go to test-artifacts/screens/ (git-ignored).  Without Chromium these tests skip
locally and fail under CI=true (scripts/bootstrap.sh installs it).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from harness.service._db import ServiceDB
from harness.store.sqlite import SQLiteStore
from tests.service.conftest import HOSTILE, ROOT, ServerProcess, hostile_task_root, launch

pytestmark = pytest.mark.browser

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SHOTS = ROOT / "test-artifacts" / "screens"


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is missing: scripts/bootstrap.sh installs it (apt chromium)")
        pytest.skip("chromium not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield b
        b.close()


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, str]]:
    tmp = tmp_path_factory.mktemp("browser")
    store = tmp / "hub.sqlite"
    SQLiteStore(store).close()
    token = ServiceDB(store).create_token("browser")
    server = ServerProcess(store, hostile_task_root(tmp)).start()
    yield server, token
    server.stop()


def _page(browser, errors: list[str]):  # type: ignore[no-untyped-def]
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    return page


def _shot(page, name: str) -> None:  # type: ignore[no-untyped-def]
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def test_a_new_user_logs_in_builds_a_scaffold_and_watches_it_run(browser, hub) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    server, token = hub
    errors: list[str] = []
    page = _page(browser, errors)
    page.goto(server.url + "/")
    expect(page.locator("h1").first).to_contain_text("six blocks")
    expect(page.locator("#login-link")).to_be_visible()
    _shot(page, "01-home")

    page.goto(server.url + "/playground")
    expect(page.locator("#launch-button")).to_be_disabled()  # a guest cannot launch
    page.click("#login-link")
    page.fill("#token", token)
    page.click("#login-form button[type=submit]")
    expect(page.locator("#who")).to_have_text("token: browser")
    assert page.url.endswith("/playground")

    # Build your own scaffold: topk's blocks with best-of-N's parent reuse.
    page.check("#mode-compose")
    page.fill("input[name=name]", "my-mix")
    page.select_option("#block_selection_policy", "best_of_n_reuse")
    page.select_option("#task", "function_minimization")
    page.fill("#iterations", "40")
    page.select_option("#sandbox", "local")
    _shot(page, "02-playground")
    page.click("#launch-button")

    # The run page: progress arrives live (no reload) until the run ends.
    page.wait_for_url("**/runs/*")
    expect(page.locator("h1")).to_contain_text("my-mix on function_minimization")
    # What the server rendered, read at once: the run is at its start, 40 iterations to go.
    page.evaluate("window.__same_page = true")  # a reload would drop it
    first = int(page.locator("#iterations").inner_text())
    events_before = page.locator("#events li").count()
    expect(page.locator("#status")).to_have_text("running", timeout=30_000)

    def grown() -> bool:
        return (
            int(page.locator("#iterations").inner_text()) > max(first, 1)
            and page.locator("#events li").count() > events_before
        )

    for _ in range(600):  # (wait_for_function evaluates a string: the hub's CSP forbids it)
        if grown():
            break
        page.wait_for_timeout(100)
    assert int(page.locator("#iterations").inner_text()) > max(first, 1)
    assert page.locator("#events li").count() > events_before
    assert page.evaluate("window.__same_page") is True
    expect(page.locator("#curve .main-svg").first).to_be_visible()
    _shot(page, "03-run-live")
    expect(page.locator("#status")).to_have_text("completed", timeout=120_000)
    expect(page.locator("#iterations")).to_have_text("40")
    # The population and the LLM usage tables followed the run without a reload.
    origin, run_path = page.url.split("/runs/", 1)
    stored = page.request.get(f"{origin}/api/v1/runs/{run_path}/programs?limit=1000").json()
    assert len(stored) > 30
    expect(page.locator("#program-count")).to_have_text(str(len(stored)), timeout=10_000)
    expect(page.locator("#population tbody tr")).to_have_count(min(50, len(stored)))
    expect(page.locator("#usage tbody td").first).to_have_text("galapagos-offline")
    expect(page.locator("#seed-score")).not_to_have_text("-")
    assert page.evaluate("window.__same_page") is True
    page.reload()
    _shot(page, "04-run-done")

    # A program and its diff to its parent.
    page.locator("#population a").nth(0).click()
    expect(page.locator("#code")).to_be_visible()
    if page.locator("#parent-link").count():
        expect(page.locator("#diff")).to_contain_text("@@")
    else:  # the best is the seed: open its first child
        page.goto(page.url.rsplit("/", 1)[0] + "/p1")
        expect(page.locator("#diff")).to_contain_text("@@")
    _shot(page, "05-program-diff")

    # The lineage: every program with its parent edge, drawn by plotly from the local bundle.
    run_url = page.url.split("/programs/")[0]
    page.goto(run_url + "/lineage")
    expect(page.locator("#lineage .main-svg").first).to_be_visible()
    nodes = httpx.get(run_url.replace("/runs/", "/api/v1/runs/") + "/lineage").json()["nodes"]
    assert page.locator("#lineage-table tbody tr").count() == len({n["iteration"] for n in nodes})
    assert page.locator("#lineage-table a").count() == len(nodes) >= 30
    _shot(page, "06-lineage")

    page.goto(server.url + "/leaderboard")
    expect(page.locator("table.leaderboard").first).to_contain_text("my-mix")
    _shot(page, "07-leaderboard")
    page.goto(server.url + "/hub/evox")
    expect(page.locator("#composition .slotbox")).to_have_count(6)
    _shot(page, "08-hub-card")
    print(errors)
    assert errors == []  # no script error, no CSP violation (plotly runs under the CSP)
    page.close()


def test_hostile_program_text_is_shown_as_text(browser, hub) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    server, token = hub
    auth = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=server.url, timeout=30) as c:
        run_id = launch(c, auth, task="hostile_min", iterations=2)
        for _ in range(600):
            if c.get(f"/api/v1/runs/{run_id}").json()["status"] == "completed":
                break
            import time

            time.sleep(0.1)
    errors: list[str] = []
    page = _page(browser, errors)
    for path in (f"/runs/{run_id}/programs/p0", f"/runs/{run_id}/programs/p1", f"/runs/{run_id}"):
        page.goto(server.url + path)
        assert page.evaluate("window.__pwned") is None
        assert page.locator("main img").count() == 0
        assert page.locator("main b:text('bold?')").count() == 0
    page.goto(server.url + f"/runs/{run_id}/programs/p0")
    expect(page.locator("#code")).to_contain_text(HOSTILE)
    _shot(page, "09-hostile-as-text")
    page.close()
