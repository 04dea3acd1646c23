"""The hub's OpenAPI document, finished: problem bodies for every error, the names a launch
may use (this hub's tasks and scaffolds, as of its start), and links between operations (a
launched run's id leads to reading, cancelling and resuming it), so clients and stateful
fuzzers can follow a run from its creation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI

from harness.service.problems import MEDIA_TYPE
from harness.service.schemas import Problem

__all__ = ["finish_openapi"]

_PROBLEM_REF = {"$ref": "#/components/schemas/Problem"}

#: (from path, method, status) -> (link name, to path, method, {parameter: expression}).
_LINKS: tuple[tuple[tuple[str, str, str], list[tuple[str, str, str, dict[str, str]]]], ...] = (
    (
        ("/api/v1/runs", "post", "201"),
        [
            (name, path, method, {"run_id": "$response.body#/run/run_id"})
            for name, path, method in (
                ("GetRun", "/api/v1/runs/{run_id}", "get"),
                ("CancelRun", "/api/v1/runs/{run_id}/cancel", "post"),
                ("ResumeRun", "/api/v1/runs/{run_id}/resume", "post"),
                ("ListPrograms", "/api/v1/runs/{run_id}/programs", "get"),
                ("GetLineage", "/api/v1/runs/{run_id}/lineage", "get"),
                ("GetEvents", "/api/v1/runs/{run_id}/events", "get"),
            )
        ],
    ),
    (
        ("/api/v1/runs/{run_id}", "get", "200"),
        [
            ("ListPrograms", "/api/v1/runs/{run_id}/programs", "get",
             {"run_id": "$response.body#/run_id"}),
            ("ResumeRun", "/api/v1/runs/{run_id}/resume", "post",
             {"run_id": "$response.body#/run_id"}),
            ("CancelRun", "/api/v1/runs/{run_id}/cancel", "post",
             {"run_id": "$response.body#/run_id"}),
        ],
    ),
    (
        ("/api/v1/runs/{run_id}/resume", "post", "202"),
        [("GetRun", "/api/v1/runs/{run_id}", "get", {"run_id": "$response.body#/run_id"})],
    ),
    (
        ("/api/v1/runs/{run_id}/programs", "get", "200"),
        [
            ("GetProgram", "/api/v1/runs/{run_id}/programs/{program_id}", "get",
             {"run_id": "$request.path.run_id", "program_id": "$response.body#/0/id"}),
        ],
    ),
    (
        ("/api/v1/scaffolds", "get", "200"),
        [("GetScaffold", "/api/v1/scaffolds/{name}", "get", {"name": "$response.body#/0/name"})],
    ),
    (
        ("/api/v1/tasks", "get", "200"),
        [("GetTask", "/api/v1/tasks/{name}", "get", {"name": "$response.body#/0/name"})],
    ),
)  # fmt: skip


def finish_openapi(app: FastAPI) -> Callable[[], dict[str, Any]]:
    """``app.openapi`` replaced by one that returns the finished document (built once)."""
    build = app.openapi

    def document() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        doc = build()
        _problems(doc)
        _names(doc, app)
        _links(doc)
        app.openapi_schema = doc
        return doc

    return document


def _problems(doc: dict[str, Any]) -> None:
    schemas = doc.setdefault("components", {}).setdefault("schemas", {})
    schemas["Problem"] = Problem.model_json_schema()
    for operations in doc.get("paths", {}).values():
        for operation in operations.values():
            for status, response in operation.get("responses", {}).items():
                if str(status)[0] in "45":
                    response["content"] = {MEDIA_TYPE: {"schema": _PROBLEM_REF}}
    for unused in ("HTTPValidationError", "ValidationError"):
        schemas.pop(unused, None)


def _names(doc: dict[str, Any], app: FastAPI) -> None:
    """A launch names a task and a scaffold of this hub's: say which (an unknown name is
    still answered 400 with the list, as before)."""
    from harness.core.registry import list_scaffolds

    launch = doc.get("components", {}).get("schemas", {}).get("LaunchIn", {})
    props = launch.get("properties", {})
    tasks = [t.name for t in app.state.hub.tasks.names()]
    if "task" in props and tasks:
        props["task"]["enum"] = tasks
    if "scaffold" in props:
        scaffold = props["scaffold"]
        for option in scaffold.get("anyOf", []):
            if option.get("type") == "string":
                option["enum"] = list_scaffolds()


def _links(doc: dict[str, Any]) -> None:
    paths = doc.get("paths", {})

    def operation_id(path: str, method: str) -> str | None:
        op = paths.get(path, {}).get(method)
        return str(op["operationId"]) if op and "operationId" in op else None

    for (path, method, status), links in _LINKS:
        response = paths.get(path, {}).get(method, {}).get("responses", {}).get(status)
        if response is None:
            continue
        out = response.setdefault("links", {})
        for name, to_path, to_method, parameters in links:
            target = operation_id(to_path, to_method)
            if target is not None:
                out[name] = {"operationId": target, "parameters": parameters}
