"""The hub's API and form endpoints through FastAPI's test client: every endpoint answers,
every write needs a token, bad input is a 4xx naming the problem, nothing escapes its roots."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from harness.service import create_app
from harness.service._db import ServiceDB
from harness.store.sqlite import SQLiteStore
from tests.service.conftest import HOSTILE, LOCAL, launch, settings, wait_status

API_WRITES = [
    ("/api/v1/runs", {"task": "function_minimization", "scaffold": "topk"}),
    ("/api/v1/runs/RUN/cancel", None),
    ("/api/v1/runs/RUN/resume", {}),
]


def _post_routes(client: TestClient) -> set[str]:
    """Every POST the hub answers: the API's from its OpenAPI document, the forms' from the
    pages router (left out of the document)."""
    from harness.service.routers import pages

    spec = client.get("/api/v1/openapi.json").json()
    api = {path for path, ops in spec["paths"].items() if "post" in ops}
    forms = {r.path for r in pages.router.routes if "POST" in getattr(r, "methods", set())}
    return api | forms


def test_every_write_route_is_covered_by_the_auth_tests(client: TestClient) -> None:
    covered = {p.replace("RUN", "{run_id}") for p, _ in API_WRITES}
    forms = {"/playground", "/runs/{run_id}/cancel", "/runs/{run_id}/resume"}
    assert _post_routes(client) == covered | forms | {"/login", "/logout"}


@pytest.mark.parametrize(("path", "body"), API_WRITES)
def test_an_unauthenticated_api_write_is_401(client: TestClient, path: str, body: dict) -> None:
    run_id = launch(client, {"Authorization": f"Bearer {_token(client)}"})
    r = client.post(path.replace("RUN", run_id), json=body)
    assert r.status_code == 401
    assert r.headers["www-authenticate"] == "Bearer"
    r = client.post(
        path.replace("RUN", run_id), json=body, headers={"Authorization": "Bearer gal_x_y"}
    )
    assert r.status_code == 401


@pytest.mark.parametrize("path", ["/playground", "/runs/RUN/cancel", "/runs/RUN/resume"])
def test_an_unauthenticated_form_write_is_401(client: TestClient, path: str) -> None:
    r = client.post(path.replace("RUN", "x"), data={"task": "function_minimization"})
    assert r.status_code == 401
    assert "log in" in r.text.lower()


def wait_idle(client: TestClient) -> None:
    """Until no run is with a worker (a stopped run's services close after its status)."""
    while client.get("/api/v1/status").json()["running"]:
        time.sleep(0.05)


def _token(client: TestClient) -> str:
    return str(client.app.state.hub.db.create_token(f"t{time.monotonic_ns()}"))  # type: ignore[attr-defined]


def test_a_run_launched_by_the_api_completes_and_every_read_endpoint_shows_it(
    client: TestClient, auth: dict[str, str]
) -> None:
    run_id = launch(client, auth, iterations=3)
    run = wait_status(client, run_id, ("completed",))
    assert run["iterations_done"] == 3 and run["best_program_id"]
    assert [r["run_id"] for r in client.get("/api/v1/runs?status=completed").json()] == [run_id]
    assert client.get("/api/v1/runs?status=failed").json() == []
    assert client.get("/api/v1/runs?task=circle_packing").json() == []
    programs = client.get(f"/api/v1/runs/{run_id}/programs").json()
    assert programs[0]["id"] == "p0" and len(programs) >= 2
    by_score = client.get(f"/api/v1/runs/{run_id}/programs?order=score").json()
    assert by_score[0]["score"] == max(p["score"] for p in programs)
    child = next(p for p in programs if p["parent_id"])
    detail = client.get(f"/api/v1/runs/{run_id}/programs/{child['id']}").json()
    assert detail["diff"].startswith(f"--- {child['parent_id']}")
    assert detail["evaluations"][0]["status"] == "ok"
    assert "timed_out" in detail["evaluations"][0]["result"]
    assert detail["llm_calls"] and detail["llm_calls"][0]["purpose"]
    parent = client.get(f"/api/v1/runs/{run_id}/programs/{child['parent_id']}").json()
    assert child["id"] in parent["children"]
    lineage = client.get(f"/api/v1/runs/{run_id}/lineage").json()
    assert {n["id"] for n in lineage["nodes"]} == {p["id"] for p in programs}
    assert [it for it, _ in lineage["best_so_far"]] == [0, 1, 2, 3]
    events = client.get(f"/api/v1/runs/{run_id}/events").json()
    seqs = [e["seq"] for e in events["events"]]
    assert seqs == list(range(len(seqs))) and events["last_seq"] == seqs[-1]
    later = client.get(f"/api/v1/runs/{run_id}/events?after={seqs[3]}").json()
    assert [e["seq"] for e in later["events"]] == seqs[4:]
    seeds = client.get(f"/api/v1/runs/{run_id}/events?kind=seed").json()["events"]
    assert [e["kind"] for e in seeds] == ["seed"]
    board = client.get("/api/v1/leaderboard").json()  # no benchmark: nothing to rank
    assert board["benchmark"] is None and board["rows"] == []
    assert client.get("/api/v1/benchmarks").json() == []
    assert run_id in client.get("/leaderboard").text  # under runs outside any benchmark
    task = client.get("/api/v1/tasks/function_minimization").json()
    assert task["best_stored_run"] == run_id
    for page in (
        "/",
        "/runs",
        f"/runs/{run_id}",
        f"/runs/{run_id}/lineage",
        f"/runs/{run_id}/programs/{child['id']}",
        f"/compare?run={run_id}",
        "/leaderboard",
        "/tasks/function_minimization",
    ):
        assert client.get(page).status_code == 200, page


def test_the_stream_sends_events_with_their_sequence_numbers_then_ends(
    client: TestClient, auth: dict[str, str]
) -> None:
    run_id = launch(client, auth, iterations=2)
    kinds, ids = [], []
    with client.stream("GET", f"/api/v1/runs/{run_id}/stream") as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        for line in stream.iter_lines():
            if line.startswith("event: "):
                kinds.append(line[7:])
            elif line.startswith("id: "):
                ids.append(int(line[4:]))
    assert kinds[0] == "progress" and kinds[-1] == "end" and "event" in kinds
    assert ids == list(range(len(ids)))
    # Reconnecting with Last-Event-ID resumes after it.
    with client.stream(
        "GET", f"/api/v1/runs/{run_id}/stream", headers={"Last-Event-ID": str(ids[-2])}
    ) as stream:
        again = [int(line[4:]) for line in stream.iter_lines() if line.startswith("id: ")]
    assert again == [ids[-1]]
    assert client.get("/api/v1/runs/nope/stream").status_code == 404


def test_catalog_endpoints(client: TestClient) -> None:
    scaffolds = client.get("/api/v1/scaffolds").json()
    names = [s["name"] for s in scaffolds]
    assert {"topk", "best_of_n", "evox"} <= set(names)
    topk = client.get("/api/v1/scaffolds/topk").json()
    assert [b["slot"] for b in topk["blocks"]] == list(topk["composition"])
    assert len(topk["blocks"]) == 6 and topk["card"].startswith("# ")
    assert any(f["path"] == "config.yaml" for f in topk["files"])
    assert client.get("/api/v1/scaffolds/nope").status_code == 404
    blocks = client.get("/api/v1/blocks").json()
    assert {b["slot"] for b in blocks} == set(topk["composition"])
    assert all(b["slot"] == "memory" for b in client.get("/api/v1/blocks?slot=memory").json())
    assert client.get("/api/v1/blocks?slot=nope").status_code == 422
    tasks = [t["name"] for t in client.get("/api/v1/tasks").json()]
    assert "circle_packing" in tasks and "hostile_min" in tasks  # shipped + configured root
    assert client.get("/api/v1/tasks/nope").status_code == 404
    status = client.get("/api/v1/status").json()
    assert status["public_read"] is True and status["tokens_exist"] is True
    spec = client.get("/api/v1/openapi.json").json()
    assert "/api/v1/runs/{run_id}/stream" in spec["paths"]


@pytest.mark.parametrize(
    "task",
    [
        "../tasks/circle_packing",
        "..",
        "/etc",
        "circle_packing/../../etc",
        "a/b",
        "%2e%2e",
        "~root",
        ".hidden",
        "",
    ],
)
def test_task_paths_outside_the_roots_are_refused(
    client: TestClient, auth: dict[str, str], task: str
) -> None:
    r = client.post("/api/v1/runs", json={"task": task, "scaffold": "topk"}, headers=auth)
    assert r.status_code in (400, 422), r.text
    assert client.get("/api/v1/runs").json() == []


def test_symlinks_out_of_a_task_root_are_refused(
    hub_store: Path, tmp_path: Path, auth: dict[str, str]
) -> None:
    s = settings(tmp_path)
    root = s.task_roots[0]
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s3cret")
    (root / "linked").symlink_to(root.parent.parent / "outside", target_is_directory=True)
    leaky = root / "leaky"
    import shutil

    shutil.copytree(root / "hostile_min", leaky)
    (leaky / "data.txt").symlink_to(outside / "secret.txt")
    store = SQLiteStore(hub_store)
    with TestClient(create_app(store, s)) as c:
        for name in ("linked", "leaky"):
            r = c.post("/api/v1/runs", json={"task": name, "scaffold": "topk"}, headers=auth)
            assert r.status_code == 400 and "link" in r.json()["detail"], r.text
        assert "s3cret" not in c.get("/api/v1/tasks").text
    store.close()


@pytest.mark.parametrize(
    "path",
    [
        "/hub/topk/files/../../../etc/passwd",
        "/hub/topk/files/%2e%2e/%2e%2e/README.md",
        "/hub/..%2f..%2fetc/files/passwd",
        "/docs/..%2f..%2fetc%2fpasswd",
        "/docs/../README",
    ],
)
def test_page_paths_cannot_traverse(client: TestClient, path: str) -> None:
    r = client.get(path)
    assert 400 <= r.status_code < 500
    assert "root:" not in r.text


def test_a_scaffold_must_be_a_name_not_a_file(
    client: TestClient, auth: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the library reads a composition file by (relative) path
    blocks = client.get("/api/v1/scaffolds/topk").json()["composition"]
    Path("evil.yaml").write_text(json.dumps({"blocks": blocks}))
    r = client.post(
        "/api/v1/runs",
        json={"task": "function_minimization", "scaffold": "evil.yaml"},
        headers=auth,
    )
    assert r.status_code == 400 and "unknown scaffold" in r.json()["detail"]


def test_an_oversize_body_is_413(client: TestClient, auth: dict[str, str]) -> None:
    big = json.dumps({"task": "x" * (2 << 20)})
    r = client.post(
        "/api/v1/runs", content=big, headers={**auth, "content-type": "application/json"}
    )
    assert r.status_code == 413

    def chunks():  # no Content-Length: counted as it arrives
        for _ in range(40):
            yield b"x" * 65536

    r = client.post(
        "/api/v1/runs", content=chunks(), headers={**auth, "content-type": "application/json"}
    )
    assert r.status_code == 413
    r = client.post(
        "/playground",
        content=chunks(),
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert r.status_code == 413


def test_bad_launches_are_400_with_the_reason(client: TestClient, auth: dict[str, str]) -> None:
    def post(**body):
        body.setdefault("task", "function_minimization")
        return client.post("/api/v1/runs", json=body, headers=auth)

    assert "unknown scaffold" in post(scaffold="nope").json()["detail"]
    assert "unknown task" in post(task="nope", scaffold="topk").json()["detail"]
    assert "either scaffold" in post().json()["detail"]
    r = post(scaffold="topk", overrides=["llm.api_base=http://evil.example"])
    assert r.status_code == 400 and "operator chooses the LLM endpoint" in r.json()["detail"]
    r = post(scaffold="topk", overrides=["llm.api_key_env=HOME"])
    assert r.status_code == 400
    r = post(scaffold="topk", overrides=["general.no_such_key=1"])
    assert r.status_code == 400 and "no_such_key" in r.json()["detail"]
    r = post(scaffold="topk", iterations=-1)
    assert r.status_code == 422
    r = post(scaffold="topk", composition={"blocks": {}})
    assert r.status_code == 400
    r = post(
        composition={
            "name": "mix",
            "blocks": {
                "population": "keep_all",
                "selection_policy": "evolved_strategy_sampler",
                "prompt": "default",
                "proposer": "diff",
                "evaluator": "task",
                "memory": "none",
            },
        }
    )
    assert r.status_code == 400 and "evolved_strategy_sampler" in r.json()["detail"]
    assert client.get("/api/v1/runs").json() == []


def test_docker_only_unless_the_operator_allows_local(
    hub_store: Path, tmp_path: Path, auth: dict[str, str]
) -> None:
    store = SQLiteStore(hub_store)
    with TestClient(create_app(store, settings(tmp_path, allow_local_sandbox=False))) as c:
        r = c.post(
            "/api/v1/runs",
            json={"task": "function_minimization", "scaffold": "topk", "overrides": [LOCAL]},
            headers=auth,
        )
        assert r.status_code == 403 and "--allow-local-sandbox" in r.json()["detail"]
    store.close()


def test_a_composition_of_blocks_runs_under_its_name(
    client: TestClient, auth: dict[str, str]
) -> None:
    blocks = client.get("/api/v1/scaffolds/topk").json()["composition"]
    blocks["selection_policy"] = "best_of_n_reuse"
    run_id = launch(client, auth, scaffold=None, composition={"name": "my-mix", "blocks": blocks})
    run = wait_status(client, run_id, ("completed",))
    assert run["scaffold"] == "my-mix"
    r = client.post(
        "/api/v1/runs",
        json={"task": "function_minimization", "composition": {"name": "topk", "blocks": blocks}},
        headers=auth,
    )
    assert r.status_code == 400 and "shipped scaffold" in r.json()["detail"]


def test_cancel_and_resume(client: TestClient, auth: dict[str, str]) -> None:
    long = launch(client, auth, iterations=400)
    queued = launch(client, auth, iterations=2)  # one worker: waits behind the long run
    wait_status(client, long, ("running",))
    assert client.get(f"/api/v1/runs/{queued}").json()["status"] == "queued"
    r = client.post(f"/api/v1/runs/{queued}/cancel", headers=auth)
    assert r.json() == {"run_id": queued, "outcome": "cancelled"}
    r = client.post(f"/api/v1/runs/{long}/cancel", headers=auth)
    assert r.json()["outcome"] == "stopping"
    stopped = wait_status(client, long, ("interrupted",))
    assert stopped["iterations_done"] < 400
    wait_idle(client)
    assert client.post(f"/api/v1/runs/{long}/cancel", headers=auth).status_code == 409
    r = client.post(f"/api/v1/runs/{queued}/resume", headers=auth)
    assert r.status_code == 202 and r.json()["status"] == "queued"
    assert wait_status(client, queued, ("completed",))["iterations_done"] == 2
    wait_idle(client)
    r = client.post(f"/api/v1/runs/{queued}/resume", headers=auth)
    assert r.status_code == 400 and "already completed" in r.json()["detail"]
    r = client.post(f"/api/v1/runs/{queued}/resume", json={"iterations": 4}, headers=auth)
    assert r.status_code == 202
    assert wait_status(client, queued, ("completed",))["iterations_done"] == 4
    assert client.post("/api/v1/runs/nope/resume", headers=auth).status_code == 404


def test_cookie_writes_need_the_csrf_value(client: TestClient, token: str) -> None:
    page = client.get("/login")
    csrf = client.cookies.get("galapagos_csrf")
    assert csrf and f'value="{csrf}"' in page.text
    assert "httponly" in page.headers["set-cookie"].lower()
    r = client.post("/login", data={"token": token, "csrf": "wrong"}, follow_redirects=False)
    assert r.status_code == 403
    r = client.post("/login", data={"token": "gal_bad_x", "csrf": csrf}, follow_redirects=False)
    assert r.status_code == 401
    r = client.post(
        "/login",
        data={"token": token, "csrf": csrf, "next": "//evil.example"},
        follow_redirects=False,
    )
    assert r.status_code == 303 and r.headers["location"] == "/"
    cookie = r.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie
    body = {
        "task": "function_minimization",
        "scaffold": "topk",
        "iterations": 1,
        "overrides": [LOCAL],
    }
    assert client.post("/api/v1/runs", json=body).status_code == 403  # cookie, no CSRF header
    r = client.post(
        "/api/v1/runs", json=body, headers={"X-CSRF-Token": csrf, "Origin": "http://evil.example"}
    )
    assert r.status_code == 403
    r = client.post("/api/v1/runs", json=body, headers={"X-CSRF-Token": csrf})
    assert r.status_code == 201
    r = client.post(
        "/playground",
        data={
            "task": "function_minimization",
            "scaffold": "topk",
            "iterations": "1",
            "overrides": LOCAL,
        },
    )
    assert r.status_code == 403
    r = client.post(
        "/playground",
        data={
            "task": "function_minimization",
            "scaffold": "topk",
            "iterations": "1",
            "overrides": LOCAL,
            "csrf": csrf,
        },
        follow_redirects=False,
    )
    assert r.status_code == 303 and r.headers["location"].startswith("/runs/")


def test_a_revoked_token_stops_working(client: TestClient, hub_store: Path, token: str) -> None:
    auth = {"Authorization": f"Bearer {token}"}
    body = {"task": "function_minimization", "scaffold": "nope"}
    assert client.post("/api/v1/runs", json=body, headers=auth).status_code == 400
    ServiceDB(hub_store).revoke_token("tester")
    assert client.post("/api/v1/runs", json=body, headers=auth).status_code == 401


def test_private_reads_need_a_token(hub_store: Path, tmp_path: Path, auth: dict[str, str]) -> None:
    store = SQLiteStore(hub_store)
    with TestClient(create_app(store, settings(tmp_path, public_read=False))) as c:
        for path in (
            "/api/v1/runs",
            "/api/v1/scaffolds",
            "/api/v1/tasks",
            "/api/v1/leaderboard",
            "/api/v1/status",
            "/api/v1/runs/x/stream",
        ):
            assert c.get(path).status_code == 401, path
            assert c.get(path, headers=auth).status_code in (200, 404), path
        r = c.get("/runs", follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] == "/login?next=/runs"
        assert c.get("/login").status_code == 200
        assert c.get("/static/hub.css").status_code == 200
    store.close()


def test_pages_escape_program_text_and_carry_a_strict_csp(
    client: TestClient, auth: dict[str, str]
) -> None:
    run_id = launch(client, auth, task="hostile_min", iterations=1)
    wait_status(client, run_id, ("completed",))
    page = client.get(f"/runs/{run_id}/programs/p0")
    assert "</script><script>window.__pwned" not in page.text
    assert "<img src=x" not in page.text
    assert "&lt;/script&gt;&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in page.text
    csp = page.headers["content-security-policy"]
    assert (
        "script-src 'self'" in csp
        and "unsafe-inline" not in csp.split("script-src")[1].split(";")[0]
    )
    assert page.headers["x-frame-options"] == "DENY"
    api = client.get(f"/api/v1/runs/{run_id}/programs/p0").json()
    assert api["code"].startswith(HOSTILE)
    for path in (f"/runs/{run_id}", f"/runs/{run_id}/lineage", f"/runs/{run_id}/programs/p1"):
        text = client.get(path).text
        assert "<script>window.__pwned" not in text and "<img src=x" not in text


def test_no_secret_in_any_page_response_or_log(
    hub_store: Path,
    tmp_path: Path,
    token: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    secret = "sk-test-DO-NOT-LEAK-4242"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    auth = {"Authorization": f"Bearer {token}"}
    store = SQLiteStore(hub_store)
    with TestClient(create_app(store, settings(tmp_path))) as c:
        run_id = launch(c, auth, iterations=1)
        wait_status(c, run_id, ("completed",))
        csrf = (c.get("/login"), c.cookies.get("galapagos_csrf"))[1]
        c.post("/login", data={"token": token, "csrf": csrf})
        seen = []
        for path in (
            "/",
            "/hub",
            "/hub/topk",
            "/runs",
            f"/runs/{run_id}",
            f"/runs/{run_id}/lineage",
            f"/runs/{run_id}/programs/p1",
            "/tasks",
            "/leaderboard",
            "/playground",
            "/docs",
            "/api/v1/openapi.json",
            f"/api/v1/runs/{run_id}",
            f"/api/v1/runs/{run_id}/events",
            f"/api/v1/runs/{run_id}/programs/p1",
            "/api/v1/status",
        ):
            r = c.get(path, headers=auth)
            assert r.status_code == 200, path
            seen.append(r.text + json.dumps(dict(r.headers)))
    store.close()
    everything = "\n".join(seen) + caplog.text
    secret_part = token.split("_", 2)[2]
    assert secret not in everything and secret_part not in everything
    assert os.environ["OPENAI_API_KEY"] == secret


def test_docs_pages_render_the_project_docs_with_html_off(client: TestClient) -> None:
    index = client.get("/docs")
    assert index.status_code == 200 and "/api/v1/runs/{run_id}/stream" in index.text
    page = client.get("/docs/service")
    assert page.status_code == 200 and 'src="/docs/images/hub-run-live.png"' in page.text
    assert client.get("/docs/images/hub-run-live.png").headers["content-type"] == "image/png"
    assert client.get("/docs/readme").status_code == 200
    assert client.get("/docs/nope").status_code == 404
    from harness.service.docs import markdown

    assert "<script>" not in markdown("<script>alert(1)</script>\n\n[x](javascript:alert(1))")


def test_hub_pages_show_scaffold_cards_and_files(client: TestClient) -> None:
    page = client.get("/hub/topk")
    assert page.status_code == 200 and "Composition" in page.text and "config.yaml" in page.text
    assert client.get("/hub/topk/files/config.yaml").text.count("blocks:") == 1
    assert client.get("/hub/nope").status_code == 404
    assert client.get("/playground?mode=compose&scaffold=evox").status_code == 200


def test_errors_name_api_fields_not_cli_flags(client: TestClient, auth: dict[str, str]) -> None:
    run_id = launch(client, auth, iterations=1)
    wait_status(client, run_id, ("completed",))
    wait_idle(client)
    r = client.post(
        f"/api/v1/runs/{run_id}/resume", json={"iterations": 5, "max_total_tokens": 1}, headers=auth
    )
    assert r.status_code == 400
    assert "max_total_tokens 1" in r.json()["detail"] and "--" not in r.json()["detail"]
    r = client.get("/api/v1/runs/nope")
    assert r.status_code == 404 and "GET /api/v1/runs" in r.json()["detail"]
