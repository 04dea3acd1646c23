"""The offline model: an OpenAI-compatible server that is a mutation operator, not an LLM.

It reads the current program from the prompt (the last fenced code block of the last user
message) and answers with SEARCH/REPLACE edits (or, for prompts without SEARCH/REPLACE
instructions, a whole program) that perturb numeric literals, deterministically given the
request seed and the prompt.  Calls sent with another purpose (request metadata: EvoX
strategy rewrites and guide calls, AdaEvolve paradigm requests) get templated answers of the
shape asked for.  Optional fault injection produces malformed diffs, no-ops, crashing and
non-compiling code.  It lets the whole pipeline run offline through the real LLM client and
the real HTTP protocol.

Production code uses this package's surface only (the server and its start); the responders
and fault injection are for the server and for tests.
"""

from __future__ import annotations

from harness.llm.offline.faults import FAULT_KINDS
from harness.llm.offline.responders import (
    HEADER,
    OfflineRequest,
    Responder,
    ResponseContext,
    current_program,
    for_purpose,
)
from harness.llm.offline.server import (
    OfflineServer,
    answer,
    create_app,
    default_responders,
    start_offline_server,
)

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
    "for_purpose",
    "start_offline_server",
]
