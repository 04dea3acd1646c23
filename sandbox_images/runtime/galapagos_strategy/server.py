"""The strategy server's frame loop: one request in, one response out, until stdin closes.

Requests are ``{"op": name, "id": n, "args": {...}}``; responses ``{"id": n, "ok": true,
"result": ...}`` or ``{"id": n, "ok": false, "error": {"kind", "type", "message",
"traceback"}}``.  Error kinds: ``raised`` (strategy code raised), ``invalid`` (a malformed
``sample`` answer), ``load`` (the module does not import), ``structure`` (it is not a
strategy), ``oom`` (MemoryError),
``protocol`` (a request this server does not understand).

Before loading anything the server moves its frame channel to private descriptors and points
fds 0/1 at /dev/null and stderr, so a strategy's ``print`` or ``input`` cannot corrupt the
stream.  Usage: ``python3 -m galapagos_strategy.server``.
"""

from __future__ import annotations

import os
import sys
import traceback
from typing import Any

from galapagos_sandbox.wire import WireError, encode_frame, read_frame, write_all

from galapagos_strategy import PROTOCOL_VERSION
from galapagos_strategy.records import InvalidAnswer
from galapagos_strategy.session import LoadError, Session

__all__ = ["UnknownOp", "dispatch", "main", "serve"]

MAX_REQUEST = 256 << 20
_MESSAGE_CHARS = 2000
_TRACEBACK_CHARS = 3000


class UnknownOp(Exception):
    """A request naming an operation this server does not have."""


def dispatch(session: Session, op: str, args: dict[str, Any]) -> Any:
    """Run one operation (shared with in-process use in tests and the benchmark)."""
    if op == "load":
        return session.load(args["source"], args.get("labels") or {}, int(args.get("seed", 0)))
    if op == "new":
        session.new(
            args.get("handle", "main"), args.get("name", "evox"), args.get("config", "evox")
        )
        return None
    if op == "add":
        return session.add(
            args.get("handle", "main"),
            args["records"],
            base=bool(args.get("base")),
            check=bool(args.get("check")),
        )
    if op == "sample":
        k = args.get("k")
        return session.sample(
            args.get("handle", "main"), None if k is None else int(k), check=bool(args.get("check"))
        )
    if op == "count":
        return session.count(args.get("handle", "main"))
    if op == "get":
        return session.get(args.get("handle", "main"), str(args["id"]))
    if op == "reseed":
        session.reseed(int(args["seed"]))
        return None
    if op == "drop":
        session.drop(args.get("handle", "main"))
        return None
    if op == "ping":
        return "pong"
    raise UnknownOp(f"unknown operation {op!r}")


def _error(kind: str, exc: BaseException) -> dict[str, Any]:
    return {
        "kind": kind,
        "type": type(exc).__name__,
        "message": str(exc)[:_MESSAGE_CHARS],
        "traceback": "".join(traceback.format_exception(exc))[-_TRACEBACK_CHARS:],
    }


def respond(session: Session, request: dict[str, Any]) -> dict[str, Any]:
    rid = request.get("id")
    op, args = request.get("op"), request.get("args") or {}
    try:
        return {"id": rid, "ok": True, "result": dispatch(session, str(op), args)}
    except UnknownOp as exc:
        return {"id": rid, "ok": False, "error": _error("protocol", exc)}
    except InvalidAnswer as exc:
        return {"id": rid, "ok": False, "error": _error("invalid", exc)}
    except LoadError as exc:
        return {"id": rid, "ok": False, "error": _error(exc.stage, exc)}
    except MemoryError as exc:
        return {"id": rid, "ok": False, "error": _error("oom", exc)}
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - strategy code may raise anything
        return {"id": rid, "ok": False, "error": _error("raised", exc)}


def serve(in_fd: int = 0, out_fd: int = 1) -> None:
    """Serve requests on ``in_fd``/``out_fd`` until EOF; the fds are moved out of reach first."""
    req_fd, resp_fd = os.dup(in_fd), os.dup(out_fd)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    session = Session()
    write_all(resp_fd, encode_frame({"kind": "ready", "protocol": PROTOCOL_VERSION}))
    while True:
        try:
            frame = read_frame(req_fd, max_frame=MAX_REQUEST)
        except WireError as exc:
            write_all(
                resp_fd, encode_frame({"id": None, "ok": False, "error": _error("protocol", exc)})
            )
            return
        if frame is None:
            return
        header, _blob = frame
        response = respond(session, header)
        try:
            data = encode_frame(response)
        except (TypeError, ValueError) as exc:  # e.g. a label that is not JSON text
            data = encode_frame(
                {"id": header.get("id"), "ok": False, "error": _error("invalid", exc)}
            )
        write_all(resp_fd, data)


def main() -> None:
    serve()
    os._exit(0)  # skip interpreter teardown: strategy objects may misbehave in __del__


if __name__ == "__main__":
    main()
