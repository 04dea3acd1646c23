"""The hub's pages: server-rendered HTML (Jinja2, autoescaped), a little JS for live parts.

Everything a run produced (code, model output, metrics, errors) is shown as escaped text;
nothing LLM-written is ever rendered as HTML or run in the browser.  Forms post with the CSRF
value of the page (double submit; see :mod:`harness.service.auth`).
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import parse_qs, quote

import jinja2
import jinja2.sandbox
from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response

from harness.benchmark.stats import sig, spread
from harness.core.config import SLOTS
from harness.core.errors import HarnessError, RunNotFound, TaskError
from harness.report import llm_usage
from harness.runs import run_status
from harness.service import catalog, docs
from harness.service.auth import CSRF_COOKIE, SESSION_COOKIE, Caller, caller, check_csrf, csrf_value
from harness.service.deps import hub_of, require_read
from harness.service.hub import Forbidden, LaunchRequest, OverQuota
from harness.service.views import (
    ACTIVE,
    benchmark_board,
    benchmarks,
    diff_lines,
    leaderboard_rows,
    lineage,
    program_detail,
    redacted,
    run_view,
)

__all__ = ["error_page", "router"]

router = APIRouter(include_in_schema=False)
TEMPLATES = Path(__file__).resolve().parents[1] / "templates"
# Sandboxed like every template environment of the project (the hub's own files, but the
# rule has no exceptions): a template cannot reach Python internals through attributes.
_env = jinja2.sandbox.ImmutableSandboxedEnvironment(
    loader=jinja2.FileSystemLoader(TEMPLATES),
    autoescape=True,  # every {{ }} is escaped: LLM-written text is only ever text
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)

Reader = Annotated[Caller, Depends(require_read)]


def _score(value: Any) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _when(value: Any) -> str:
    if not value:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(value)))


_env.filters["score"] = _score
_env.filters["sig"] = sig  # the leaderboard's one rule for significant digits
_env.filters["spread"] = spread
_env.filters["when"] = _when
_env.filters["pretty"] = lambda v: json.dumps(v, indent=2, sort_keys=True, default=str)


def render(request: Request, template: str, status_code: int = 200, **context: Any) -> Response:
    hub = hub_of(request)
    try:
        who = caller(request, hub.db, hub.settings)
    except HTTPException:
        who = Caller(None)
    token = csrf_value(request)
    html = _env.get_template(template).render(
        request_path=request.url.path,
        who=who,
        csrf=token,
        public_read=hub.settings.public_read,
        tokens_exist=hub.db.active_tokens() > 0,
        on_cluster=hub.queue.ray_address is not None,
        **context,
    )
    response = HTMLResponse(html, status_code=status_code)
    if request.cookies.get(CSRF_COOKIE) != token:
        response.set_cookie(
            CSRF_COOKIE,
            token,
            httponly=True,
            samesite="strict",
            secure=hub.settings.secure_cookies,
            path="/",
        )
    return response


def error_page(request: Request, code: int, message: str) -> Response:
    return render(request, "error.html", status_code=code, code=code, message=message)


async def _form(request: Request) -> dict[str, list[str]]:
    body = (await request.body()).decode("utf-8", errors="replace")
    return parse_qs(body, keep_blank_values=True, max_num_fields=200)


def _one(form: dict[str, list[str]], key: str, default: str = "") -> str:
    values = form.get(key)
    return values[0] if values else default


async def _writer(request: Request) -> tuple[Caller, dict[str, list[str]]]:
    """A form post from a logged-in browser with the page's CSRF value (else 401/403), by a
    token that may launch."""
    hub = hub_of(request)
    who = await asyncio.to_thread(caller, request, hub.db, hub.settings)
    if not who.authenticated:
        raise HTTPException(401, "log in with a token to do that")
    form = await _form(request)
    if who.via == "cookie":
        check_csrf(request, _one(form, "csrf"), hub.settings)
    if not who.allows("launch"):
        raise Forbidden("this token may only read; launching, cancelling and resuming need a "
                        "token with scope launch")  # fmt: skip
    return who, form


# -- home, hub ------------------------------------------------------------------------------
@router.get("/", response_class=HTMLResponse)
def home(request: Request, _: Reader) -> Response:
    store = hub_of(request).reader()
    runs = [run_view(store, r) for r in store.list_runs(limit=8)]
    cards = [catalog.scaffold(n) for n in catalog.scaffold_names()]
    return render(request, "home.html", runs=runs, cards=cards, slots=SLOTS)


@router.get("/hub", response_class=HTMLResponse)
def hub_page(request: Request, _: Reader) -> Response:
    cards = [catalog.scaffold(n) for n in catalog.scaffold_names()]
    return render(request, "hub.html", cards=cards, slots=SLOTS)


@router.get("/hub/{name}", response_class=HTMLResponse)
def scaffold_page(request: Request, name: str, _: Reader) -> Response:
    card = catalog.scaffold(name)
    return render(
        request,
        "scaffold.html",
        card=card,
        slots=SLOTS,
        slot_help=catalog.SLOT_HELP,
        card_html=docs.markdown(card["card"]),
    )


@router.get("/hub/{name}/files/{path:path}", response_class=HTMLResponse)
def scaffold_file(request: Request, name: str, path: str, _: Reader) -> Response:
    text = catalog.scaffold_file(name, path)
    return render(request, "file.html", name=name, path=path, text=text)


# -- cluster --------------------------------------------------------------------------------
@router.get("/cluster", response_class=HTMLResponse)
async def cluster_page(request: Request, _: Reader) -> Response:
    """Each Ray node's load (``galapagos serve --ray-address``); without a cluster, says that
    the queue runs on this machine."""
    queue = hub_of(request).queue
    nodes = await asyncio.to_thread(queue.cluster_load)
    return render(request, "cluster.html", ray_address=queue.ray_address, nodes=nodes)


# -- runs -----------------------------------------------------------------------------------
@router.get("/runs", response_class=HTMLResponse)
def runs_page(
    request: Request,
    _: Reader,
    status: Annotated[str | None, Query(max_length=32)] = None,
    task: Annotated[str | None, Query(max_length=128)] = None,
) -> Response:
    store = hub_of(request).reader()
    runs = []
    for run in store.list_runs(limit=500):
        if (status and run_status(run) != status) or (task and run.task != task):
            continue
        runs.append(run_view(store, run))
    return render(request, "runs.html", runs=runs, status=status or "", task=task or "")


@router.get("/runs/{run_id}", response_class=HTMLResponse)
def run_page(request: Request, run_id: str, _: Reader) -> Response:
    store = hub_of(request).reader()
    run = store.get_run(run_id)
    view = run_view(store, run)
    programs = sorted(store.programs(run.id), key=lambda p: p.score, reverse=True)
    events = store.events_after(run.id, max(-1, store.last_seq(run.id) - 200))
    return render(
        request,
        "run.html",
        run=view,
        config=redacted(run.config),
        programs=programs[:50],
        program_count=len(programs),
        usage=llm_usage(store, run),
        events=[_shown_event(e) for e in events],
        active=view["status"] in ACTIVE,
    )


@router.get("/runs/{run_id}/lineage", response_class=HTMLResponse)
def lineage_page(request: Request, run_id: str, _: Reader) -> Response:
    store = hub_of(request).reader()
    run = store.get_run(run_id)
    data = lineage(store, run)
    by_iteration: dict[int, list[dict[str, Any]]] = {}
    for node in data["nodes"]:
        by_iteration.setdefault(node["iteration"], []).append(node)
    return render(
        request, "lineage.html", run=run_view(store, run), by_iteration=sorted(by_iteration.items())
    )


@router.get("/runs/{run_id}/programs/{program_id}", response_class=HTMLResponse)
def program_page(request: Request, run_id: str, program_id: str, _: Reader) -> Response:
    store = hub_of(request).reader()
    run = store.get_run(run_id)
    program = program_detail(store, run, program_id)
    exchanges = (
        store.llm_exchanges(run.id, program["iteration"]) if program["iteration"] > 0 else []
    )
    events = [_shown_event(e) for e in store.events(run.id) if e.iteration == program["iteration"]]
    return render(
        request,
        "program.html",
        run=run_view(store, run),
        program=program,
        diff=diff_lines(program["diff"]),
        exchanges=[{**x, "error": redacted(x.get("error"))} for x in exchanges],
        events=events,
    )


def _shown_event(event: Any) -> Any:
    """An event with the URLs in its payload redacted (same fields as stored)."""
    return replace(event, payload=redacted(dict(event.payload)))


@router.post("/runs/{run_id}/cancel")
async def cancel_form(request: Request, run_id: str) -> Response:
    who, _ = await _writer(request)
    hub = hub_of(request)
    await asyncio.to_thread(hub.cancel, run_id, who.token)  # store work stays off the loop
    return RedirectResponse(f"/runs/{quote(run_id)}", status_code=303)


@router.post("/runs/{run_id}/resume")
async def resume_form(request: Request, run_id: str) -> Response:
    who, form = await _writer(request)
    iterations = _whole(_one(form, "iterations"), "iterations")
    hub = hub_of(request)
    run = await asyncio.to_thread(hub.resume, run_id, {"iterations": iterations}, who.token)
    return RedirectResponse(f"/runs/{quote(run.id)}", status_code=303)


@router.get("/compare", response_class=HTMLResponse)
def compare_page(
    request: Request, _: Reader, run: Annotated[list[str] | None, Query()] = None
) -> Response:
    store = hub_of(request).reader()
    chosen = []
    for run_id in (run or [])[:8]:
        try:
            record = store.get_run(run_id)
        except RunNotFound:
            continue
        chosen.append({**run_view(store, record), "history": store.score_history(record.id)})
    return render(request, "compare.html", runs=chosen)


# -- tasks, leaderboard ---------------------------------------------------------------------
@router.get("/tasks", response_class=HTMLResponse)
def tasks_page(request: Request, _: Reader) -> Response:
    hub = hub_of(request)
    return render(request, "tasks.html", tasks=catalog.tasks(hub.tasks, hub.reader()))


@router.get("/tasks/{name}", response_class=HTMLResponse)
def task_page(request: Request, name: str, _: Reader) -> Response:
    hub = hub_of(request)
    try:
        info = catalog.task(hub.tasks, hub.reader(), name)
    except TaskError as exc:
        raise HTTPException(404, str(exc)) from None
    store = hub.reader()
    runs = [run_view(store, r) for r in store.list_runs() if r.task == info["name"]][:50]
    return render(request, "task.html", task=info, runs=runs)


@router.get("/leaderboard", response_class=HTMLResponse)
def leaderboard_page(
    request: Request,
    _: Reader,
    benchmark: Annotated[str | None, Query(max_length=100)] = None,
    pool_models: bool = False,
) -> Response:
    """A benchmark's table (the newest unless one is chosen), then the runs outside any, one
    row per model unless ``pool_models``."""
    store = hub_of(request).reader()
    try:
        board = benchmark_board(store, benchmark, None)
    except HarnessError as exc:
        raise HTTPException(404, str(exc)) from None
    by_task: dict[str, list[dict[str, Any]]] = {}
    for row in sorted(board["rows"], key=lambda r: (r["rank"] or 1e9, r["scaffold"])):
        by_task.setdefault(row["task"], []).append(row)
    in_benchmarks = store.benchmarks.benchmark_run_ids()
    loose = leaderboard_rows(
        store,
        [r for r in store.list_runs() if r.id not in in_benchmarks],
        pool_models=pool_models,
    )
    tasks: dict[str, list[dict[str, Any]]] = {}
    for row in loose:
        tasks.setdefault(row["task"], []).append(row)
    return render(
        request,
        "leaderboard.html",
        benchmarks=benchmarks(store),
        board=board,
        board_tasks=by_task,
        ranks=sorted(
            board["scaffolds"],
            key=lambda r: (r["mean_rank"] is None, r["mean_rank"] or 0.0, r["scaffold"]),
        ),
        tasks=tasks,
        pool_models=pool_models,
    )


# -- playground -----------------------------------------------------------------------------
@router.get("/playground", response_class=HTMLResponse)
def playground_page(request: Request, _: Reader) -> Response:
    wanted = {k: [v] for k, v in request.query_params.items() if k in ("mode", "scaffold", "task")}
    return _playground(request, wanted, "")


def _playground(
    request: Request, form: dict[str, list[str]], error: str, status: int = 400
) -> Response:
    hub = hub_of(request)
    names = catalog.scaffold_names()
    chosen = _one(form, "scaffold")
    base_name = chosen if chosen in names else ("topk" if "topk" in names else names[0])
    return render(
        request,
        "playground.html",
        base=catalog.scaffold(base_name)["composition"],
        status_code=status if error else 200,
        scaffolds=[catalog.scaffold(n) for n in catalog.scaffold_names()],
        blocks=catalog.blocks_by_slot(),
        slots=SLOTS,
        slot_help=catalog.SLOT_HELP,
        tasks=[t.name for t in hub.tasks.names()],
        form={k: v[0] for k, v in form.items() if v},
        error=error,
        allow_local=hub.settings.allow_local_sandbox,
    )


@router.post("/playground")
async def playground_launch(request: Request) -> Response:
    who, form = await _writer(request)
    hub = hub_of(request)
    try:
        request_obj = _launch_request(form)
        run, _notes = await asyncio.to_thread(hub.launch, request_obj, who.token)
    except OverQuota as exc:
        page = await asyncio.to_thread(_playground, request, form, str(exc), 429)
        page.headers["Retry-After"] = str(exc.retry_after_s)
        return page
    except HarnessError as exc:
        return await asyncio.to_thread(_playground, request, form, str(exc))
    return RedirectResponse(f"/runs/{quote(run.id)}", status_code=303)


def _whole(raw: str, key: str, most: int = 2**63 - 1) -> int | None:
    """A form's whole number (ASCII digits only: ``²`` is a digit to Python, not to us)."""
    raw = raw.strip()
    if not raw:
        return None
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 19 or int(raw) > most:
        raise TaskError(f"{key} {raw[:20]!r}: give a whole number from 0 to {most}")
    return int(raw)


def _launch_request(form: dict[str, list[str]]) -> LaunchRequest:
    def number(key: str) -> int | None:
        return _whole(_one(form, key), key, 100_000 if key == "iterations" else 2**32 - 1)

    overrides = [line.strip() for line in _one(form, "overrides").splitlines() if line.strip()][:50]
    if _one(form, "sandbox") == "local":
        overrides.append("evaluator.sandbox=local")
    mode = _one(form, "mode", "scaffold")
    composition = None
    scaffold: str | None = _one(form, "scaffold") or None
    if mode == "compose":
        scaffold = None
        composition = {
            "name": _one(form, "name").strip() or "custom",
            "blocks": {slot: _one(form, f"block_{slot}") for slot in SLOTS},
        }
    return LaunchRequest(
        task=_one(form, "task"),
        scaffold=scaffold,
        composition=composition,
        iterations=number("iterations"),
        seed=number("seed"),
        overrides=tuple(overrides),
    )


# -- docs -----------------------------------------------------------------------------------
@router.get("/docs", response_class=HTMLResponse)
def docs_index(request: Request, _: Reader) -> Response:
    hub = hub_of(request)
    pages = docs.pages(hub.settings.docs_dir)
    api = docs.api_reference(request.app.openapi())
    return render(request, "docs.html", pages=pages, page=None, html="", api=api)


@router.get("/docs/images/{name}")
def docs_image(request: Request, name: str, _: Reader) -> Response:
    path = docs.image(hub_of(request).settings.docs_dir, name)
    return FileResponse(path, media_type="image/png")


@router.get("/docs/{name}", response_class=HTMLResponse)
def docs_page(request: Request, name: str, _: Reader) -> Response:
    hub = hub_of(request)
    pages = docs.pages(hub.settings.docs_dir)
    html = docs.render_page(hub.settings.docs_dir, name)
    return render(request, "docs.html", pages=pages, page=name, html=html, api=[])


# -- login ----------------------------------------------------------------------------------
@router.get("/login", response_class=HTMLResponse)
def login_page(request: Request, next: Annotated[str, Query(max_length=512)] = "/") -> Response:
    return render(request, "login.html", next=_safe_next(next), error="")


@router.post("/login")
async def login(request: Request) -> Response:
    hub = hub_of(request)
    form = await _form(request)
    check_csrf(request, _one(form, "csrf"), hub.settings)
    token = _one(form, "token").strip()
    target = _safe_next(_one(form, "next", "/"))
    info = await asyncio.to_thread(hub.db.check_token, token) if token else None
    if info is None:
        return render(
            request,
            "login.html",
            status_code=401,
            next=target,
            error="That token is not valid (or was revoked, or expired).",
        )
    # The cookie carries a session of the hub's, never the token: logging out (or revoking
    # the token) ends it wherever the cookie went.
    session, ends = await asyncio.to_thread(
        hub.db.create_session, info, ttl_s=hub.settings.session_ttl_s
    )
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(
        SESSION_COOKIE,
        session,
        httponly=True,
        samesite="strict",
        secure=hub.settings.secure_cookies,
        path="/",
        max_age=max(1, int(ends - time.time())),
    )
    return response


@router.post("/logout")
async def logout(request: Request) -> Response:
    hub = hub_of(request)
    form = await _form(request)
    check_csrf(request, _one(form, "csrf"), hub.settings)
    session = request.cookies.get(SESSION_COOKIE, "")
    if session:
        await asyncio.to_thread(hub.db.end_session, session)
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


def _safe_next(target: str) -> str:
    """Only a path on this hub (never another site: no open redirect)."""
    if not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target
