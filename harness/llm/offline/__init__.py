"""The offline model: an OpenAI-compatible server that is a mutation operator, not an LLM.

It reads the current program from the prompt (the last fenced code block of the last user
message) and answers with SEARCH/REPLACE edits (or, for prompts without SEARCH/REPLACE
instructions, a whole program) that perturb numeric literals, deterministically given the
request seed and the prompt.  Optional fault injection produces malformed diffs, no-ops,
crashing and non-compiling code.  It lets the whole pipeline run offline through the real
``openai`` client and the real HTTP protocol.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness.llm.offline.faults import FAULT_KINDS
from harness.llm.offline.responders import (
    HEADER,
    OfflineRequest,
    Responder,
    ResponseContext,
    current_program,
    default_responders,
    marker,
)

if TYPE_CHECKING:
    from harness.llm.offline.server import (
        OfflineServer,
        answer,
        create_app,
        start_offline_server,
    )

#: The web stack (FastAPI, uvicorn) loads only when the server is asked for: a run with an
#: endpoint of its own, or a block that reads a marker from here, does not pay for it.
_SERVER = ("OfflineServer", "answer", "create_app", "start_offline_server")


def __getattr__(name: str) -> Any:
    if name in _SERVER:
        from harness.llm.offline import server

        return getattr(server, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "FAULT_KINDS",
    "HEADER",
    "OfflineRequest",
    "OfflineServer",
    "Responder",
    "ResponseContext",
    "answer",
    "create_app",
    "current_program",
    "default_responders",
    "marker",
    "start_offline_server",
]
