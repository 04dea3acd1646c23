"""schemathesis against the hub's OpenAPI document (the live stream excluded): no input makes
the server fail (no 5xx), and every response matches the document (status codes declared,
bodies of the declared shape, problem documents for errors).

Three passes: every operation on its own (valid and invalid data); stateful sequences that
follow the document's links (launch a run, then read, cancel and resume it, list its
programs and read one); and unusual bodies and parameters sent to every operation (deep
nesting, huge numbers, invalid UTF-8, NaN, lone surrogates, very long strings)."""

from __future__ import annotations

import atexit
import shutil
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import pytest
import schemathesis
import schemathesis.checks
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings

from harness.service import create_app
from harness.service._db import ServiceDB
from harness.service.hub import LaunchRequest
from harness.store.sqlite import SQLiteStore
from tests.service.conftest import settings as hub_settings

_TMP = Path(tempfile.mkdtemp(prefix="galapagos-fuzz-"))
atexit.register(shutil.rmtree, _TMP, True)
_STORE = SQLiteStore(_TMP / "fuzz.sqlite")
TOKEN = ServiceDB(_STORE.path).create_token("fuzz", scope="admin")
AUTH = {"Authorization": f"Bearer {TOKEN}"}
# Only docker is allowed and the run queue never starts: a fuzzed launch that is valid is
# stored as queued and nothing executes.
APP = create_app(_STORE, hub_settings(_TMP, allow_local_sandbox=False, max_queued_per_token=1000))
RUN, _ = APP.state.hub.launch(
    LaunchRequest(task="function_minimization", scaffold="topk", iterations=1)
)


async def without_lifespan(scope: Any, receive: Any, send: Any) -> None:
    """The app without its start-up and shut-down (schemathesis's ASGI client runs both around
    every call: the queue would start, run the fuzzed launches, and stop each time)."""
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    await APP(scope, receive, send)


schema = schemathesis.openapi.from_asgi("/api/v1/openapi.json", without_lifespan).exclude(
    path_regex="/stream$"
)
_KEY = {"runs": "id", "service_queue": "run_id", "events": "run_id"}
#: A well-formed launch that names no task is the business's 400, not a schema violation.
EXCLUDED = [schemathesis.checks.positive_data_acceptance]
FUZZ = settings(
    max_examples=30, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)


@pytest.mark.slow
@schema.parametrize()
@FUZZ
def test_the_api_never_fails_on_any_input(case: schemathesis.Case) -> None:
    if case.path_parameters and "run_id" in case.path_parameters:
        # Half the cases hit a real run, so the fuzzing reaches past "no such run".
        if len(str(case.path_parameters["run_id"])) % 2 == 0:
            case.path_parameters["run_id"] = RUN.id
    case.call_and_validate(headers=AUTH, excluded_checks=EXCLUDED)


class HubWorkflow(schema.as_state_machine()):  # type: ignore[misc]
    """Sequences along the document's links, as a token holder (admin) makes them; each
    sequence starts from the same store (one queued run), so sequences replay exactly."""

    def setup(self) -> None:
        with sqlite3.connect(_STORE.path, timeout=30) as conn:
            for table in ("runs", "service_queue", "events"):
                conn.execute(f"DELETE FROM {table} WHERE {_KEY[table]} != ?", (RUN.id,))
            conn.execute("UPDATE runs SET status = 'queued', error = '' WHERE id = ?", (RUN.id,))
            conn.execute("UPDATE service_queue SET state = 'queued' WHERE run_id = ?", (RUN.id,))
        super().setup()

    def get_call_kwargs(self, case: schemathesis.Case) -> dict[str, Any]:
        return {"headers": AUTH}

    def validate_response(self, response: Any, case: schemathesis.Case, **kwargs: Any) -> None:
        assert response.status_code < 500, (case.method, case.path, response.text[:300])
        case.validate_response(
            response,
            excluded_checks=EXCLUDED,
            transport_kwargs=kwargs.get("transport_kwargs"),
            recorder=getattr(self, "recorder", None),
        )


TestHubWorkflow = HubWorkflow.TestCase
TestHubWorkflow.pytestmark = [pytest.mark.slow]  # ≈5 s of stateful fuzzing
TestHubWorkflow.settings = settings(
    max_examples=60,
    stateful_step_count=8,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)


def test_the_document_links_a_launched_run_to_what_can_follow() -> None:
    doc = APP.openapi()
    links = doc["paths"]["/api/v1/runs"]["post"]["responses"]["201"]["links"]
    assert {"GetRun", "CancelRun", "ResumeRun", "ListPrograms"} <= set(links)
    for operations in doc["paths"].values():
        for operation in operations.values():
            for status, response in operation["responses"].items():
                if status.startswith(("4", "5")):
                    assert "application/problem+json" in response["content"], (status, operation)


#: Bodies nobody should send: each gets a 4xx problem from every operation that takes one.
UNUSUAL_BODIES = [
    b"[" * 100_000,
    b'{"a":' * 5_000 + b"1" + b"}" * 5_000,
    b'{"task": 1' + b"0" * 100_000 + b"}",
    b'{"task": 1e999999, "iterations": -1e999999}',
    b'{"iterations": NaN, "seed": Infinity, "max_cost": -Infinity}',
    b'{"task": "\xc3\x28\xa0\xa1\xff"}',  # invalid UTF-8
    b'{"task": "\\ud800\\udfff\\udc00"}',  # a lone surrogate among them
    b'{"task": "' + b"x" * 500_000 + b'"}',
    b'{"overrides": ["' + b"a" * 400 + b'=1"' + b', "b=1"' * 60 + b"]}",
    b'{"composition": {"blocks": {"' + b"k" * 1000 + b'": "v"}}, "task": "t"}',
    b"\x00\x01\x02",
    b"",
    b"1",
    b'"just a string"',
]
UNUSUAL_VALUES = ["%00", "%ED%A0%80", "%FF", "9" * 5000, "NaN", "..%2F..%2Fetc", "x" * 5000]


def _operations() -> list[tuple[str, str, bool]]:
    doc = APP.openapi()
    return [
        (path, method, "requestBody" in operation)
        for path, operations in doc["paths"].items()
        for method, operation in operations.items()
        if not path.endswith("/stream")
    ]


@pytest.mark.parametrize(("path", "method", "has_body"), _operations())
def test_unusual_bodies_and_parameters_never_fail_any_operation(
    path: str, method: str, has_body: bool
) -> None:
    c = TestClient(APP, base_url="http://127.0.0.1")
    targets = [path.replace("{run_id}", RUN.id).replace("{program_id}", "p0")]
    targets += [
        path.replace("{run_id}", v).replace("{program_id}", v).replace("{name}", v)
        for v in UNUSUAL_VALUES
        if "{" in path
    ]
    targets = [t.replace("{name}", "topk") for t in targets]
    queries = ["", "?limit=" + "9" * 400, "?after=NaN&kind=%FF", "?slot=%00&order=" + "x" * 3000]
    for target in targets:
        for query in queries:
            r = c.request(method.upper(), target + query, headers=AUTH)
            assert r.status_code < 500, (method, target + query, r.text[:300])
        if not has_body:
            continue
        for raw in UNUSUAL_BODIES:
            r = c.request(
                method.upper(),
                target,
                content=raw,
                headers={**AUTH, "content-type": "application/json"},
            )
            assert r.status_code < 500, (method, target, raw[:60], r.text[:300])
            if r.status_code >= 400:
                assert r.headers["content-type"] == "application/problem+json", r.headers
