"""One deterministic fake OpenAI-compatible endpoint for whole-run differential tests.

Both sides of a comparison (Galapagos and a reference implementation) get their own fresh
instance, and each request is answered from the request alone: the *current program* the prompt
shows (under its ``Current Program``/``Current Solution`` heading) and how many times this
instance was already asked about that program.  So two faithful runs, whatever their prompt
wording, receive the same answers in the same order; the first request where the parents differ
is where the runs part.

An answer edits one numeric assignment of the program's EVOLVE block (``NAME = number``):

- usually a new number (a SEARCH/REPLACE block, or the whole program when the prompt asks for a
  rewrite: no ``<<<<<<< SEARCH`` line in it);
- one request in ten sets it to ``None`` (the program runs, its evaluation fails);
- in diff mode one in ten has a SEARCH part the program does not contain (no child).

Each request is logged with its current program and the programs it shows: the fenced blocks of
the user message that are programs this instance has seen (the first current program, every
child it wrote) other than the current program.  Standard library only.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeEndpoint", "Request", "answer"]

MODEL = "fake-deterministic"
_FENCE = re.compile(r"^(`{3,})[^\n`]*\n(.*?)\n\1[ \t]*$", re.S | re.M)
_HEADING = re.compile(r"^#+ *Current (Program|Solution) *$", re.M)
_ASSIGN = re.compile(r"^(\s*[A-Z][A-Z0-9_]*\s*=\s*)(-?\d+(?:\.\d+)?)\s*$")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _norm(code: str) -> str:
    return code.strip("\n").rstrip()


def current_program(user: str) -> str | None:
    """The fenced block after the ``Current Program``/``Current Solution`` heading, else the
    last fenced block without diff markers."""
    heading = _HEADING.search(user)
    if heading is not None:
        fence = _FENCE.search(user, heading.end())
        if fence is not None:
            return _norm(fence.group(2))
    for fence in reversed(list(_FENCE.finditer(user))):
        if "<<<<<<< SEARCH" not in fence.group(2):
            return _norm(fence.group(2))
    return None


def answer(
    code: str, seen: int, *, diff: bool, unmatched: bool = True
) -> tuple[str, str | None, str]:
    """The reply to a request whose current program is ``code`` (asked ``seen`` times before):
    ``(text, child code or None, kind)``."""
    lines = code.split("\n")
    inside, candidates = False, []
    for n, line in enumerate(lines):
        if "EVOLVE-BLOCK-START" in line:
            inside = True
        elif "EVOLVE-BLOCK-END" in line:
            inside = False
        elif inside and _ASSIGN.match(line):
            candidates.append(n)
    h = int(_digest(f"{code}\x00{seen}"), 16)
    if not candidates:
        return "I see nothing to change.", None, "none"
    n = candidates[h % len(candidates)]
    head, number = _ASSIGN.match(lines[n]).groups()  # type: ignore[union-attr]
    roll = (h >> 16) % 10
    if diff and unmatched and roll == 1:
        missing = f"{head}{number}  # not in the program"
        text = f"<<<<<<< SEARCH\n{missing}\n=======\n{head}0\n>>>>>>> REPLACE"
        return text, None, "unmatched"
    if roll == 0:
        new_line, kind = f"{head}None", "breaks"
    else:
        step = ((h >> 32) % 2001 - 1000) / 4000.0  # within ±0.25
        new_line, kind = f"{head}{round(float(number) + step, 4)}", "edit"
    child = "\n".join([*lines[:n], new_line, *lines[n + 1 :]])
    if diff:
        block = f"<<<<<<< SEARCH\n{lines[n]}\n=======\n{new_line}\n>>>>>>> REPLACE"
        text = f"Changing one constant.\n\n{block}\n"
    else:
        text = f"Here is the whole program.\n\n```python\n{child}\n```\n"
    return text, child, kind


@dataclass
class Request:
    """One logged request."""

    current: str | None
    shown: list[str]
    diff: bool
    kind: str
    system: str = ""
    user: str = ""


@dataclass
class FakeEndpoint:
    """Serve on loopback; ``url`` is the ``/v1`` base; ``log`` the requests in order."""

    #: Answer some diff requests with a SEARCH part the program lacks (see the module doc).
    unmatched: bool = True
    log: list[Request] = field(default_factory=list)
    known: dict[str, str] = field(default_factory=dict)
    seen: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return

            def _send(self, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                self._send({"object": "list", "data": [{"id": MODEL, "object": "model"}]})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                request = json.loads(self.rfile.read(length) or b"{}")
                text = endpoint.respond(request.get("messages") or [])
                self._send(
                    {
                        "id": "fake",
                        "object": "chat.completion",
                        "created": 0,
                        "model": request.get("model") or MODEL,
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": text},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
                    }
                )

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> FakeEndpoint:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def respond(self, messages: list[dict[str, Any]]) -> str:
        system = "\n".join(_text(m) for m in messages if m.get("role") == "system")
        user = next((_text(m) for m in reversed(messages) if m.get("role") == "user"), "")
        diff = re.search(r"^<<<<<<< SEARCH\s*$", user, re.M) is not None
        with self._lock:
            code = current_program(user)
            if code is None:
                self.log.append(Request(None, [], diff, "no program", system, user))
                return "There is no program in the prompt."
            key = _digest(code)
            if not self.known:
                self.known[key] = code  # the seed: the first current program
            shown = sorted(
                {
                    _digest(body)
                    for fence in _FENCE.finditer(user)
                    if (body := _norm(fence.group(2))) != code and _digest(body) in self.known
                }
            )
            text, child, kind = answer(code, self.seen[key], diff=diff, unmatched=self.unmatched)
            self.seen[key] += 1
            if child is not None:
                self.known[_digest(_norm(child))] = _norm(child)
            self.log.append(Request(key, shown, diff, kind, system, user))
        return text


def _text(message: dict[str, Any]) -> str:
    content = message.get("content") or ""
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)
