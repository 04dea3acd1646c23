"""The candidate process: loads the candidate program and answers calls (untrusted side).

Runs as the candidate uid after :func:`galapagos_sandbox.confine.become_candidate`.  Requests
arrive as frames on fd 3, answers leave on fd 4; stdout/stderr are separate capped pipes, so
nothing the candidate prints can be mistaken for an answer.  Everything here may be tampered
with by the candidate (it shares the process), which is fine: the runner trusts only the bytes
it decodes, and those can only ever be plain data.

Requests: ``ping`` (no-op), ``load`` (exec the source as module ``program``), ``call``
(``name(*args)``) and
``compat`` (write the task files, import the OpenEvolve evaluator and call it with the program's
path: compat mode, where the evaluator shares the candidate's process by design).
"""

from __future__ import annotations

import os
import sys
import types

from galapagos_sandbox.wire import (
    FrameReader,
    UnsupportedType,
    decode_value,
    encode_frame,
    encode_value,
    write_all,
)

# typing costs milliseconds of container start-up; annotations are strings anyway.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["REQUEST_FD", "RESPONSE_FD", "fresh_randomness", "install_site_builtins", "serve"]

REQUEST_FD = 3
RESPONSE_FD = 4
MAX_REQUEST = 256 << 20
_MESSAGE_CHARS = 2000
_TRACEBACK_CHARS = 4000


def _safe_str(value: Any) -> str:
    try:
        return str(value)[:_MESSAGE_CHARS]
    except Exception:  # noqa: BLE001 - a candidate's __str__ may raise anything
        return f"<unprintable {type(value).__name__}>"


def _error(kind: str, exc: BaseException) -> dict[str, Any]:
    import traceback  # only on the failure path: it is slow to import

    try:
        lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
        tb = "".join(lines)[-_TRACEBACK_CHARS:]
    except Exception:  # noqa: BLE001 - formatting a hostile exception must not kill the worker
        tb = ""
    return {
        "ok": False,
        "kind": kind,
        "type": type(exc).__name__[:200],
        "message": _safe_str(exc),
        "traceback": tb,
        "code": exc.code if isinstance(exc, SystemExit) and type(exc.code) is int else None,
    }


class _Worker:
    def __init__(self, compat_path: str) -> None:
        self.compat_path = compat_path
        self.program: types.ModuleType | None = None

    def load(self, header: dict[str, Any]) -> dict[str, Any]:
        source = str(header.get("source", ""))
        path = os.path.abspath(os.path.basename(str(header.get("filename") or "program.py")))
        # Plain fds: an io.TextIOWrapper costs this first write in a fresh process 0.1 ms.
        data = memoryview(source.encode("utf-8"))
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        try:
            while data:
                data = data[os.write(fd, data) :]
        finally:
            os.close(fd)
        module = types.ModuleType("program")
        module.__file__ = path
        sys.modules["program"] = module  # dataclasses and pickle look classes up here
        # Tracebacks and warnings name the file as the program knows it ("program.py"), not
        # the sandbox's directory: the LLM reads them, and a seeded run must read the same
        # text whichever backend, job directory or process ran it.  linecache serves the lines.
        shown = os.path.basename(path)
        import linecache  # here: the first load pays for it, not every container start

        linecache.cache[shown] = (len(source), None, source.splitlines(True), shown)
        # dont_inherit: the program is compiled as ``python3 program.py`` would, not with this
        # module's ``from __future__ import annotations``.
        code = compile(source, shown, "exec", dont_inherit=True)
        exec(code, module.__dict__)  # noqa: S102 - the sandboxed program
        self.program = module
        return {"ok": True}

    def call(self, header: dict[str, Any], blob: bytearray) -> tuple[dict[str, Any], bytes]:
        name = str(header.get("name", ""))
        args = decode_value(header.get("args", []), blob)
        if self.program is None:
            raise RuntimeError("no program loaded")
        func = getattr(self.program, name, None)
        if func is None or not callable(func):
            raise AttributeError(f"the program defines no function {name!r}")
        value = func(*args)
        tree, out = encode_value(value)
        return {"ok": True, "value": tree}, out

    def compat(self, header: dict[str, Any], blob: bytearray) -> tuple[dict[str, Any], bytes]:
        taskdir = os.path.abspath("task")
        os.makedirs(taskdir, exist_ok=True)
        for name, offset, size in header.get("files", []):
            target = os.path.join(taskdir, name)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as f:
                f.write(blob[offset : offset + size])
        program = os.path.abspath(os.path.basename(str(header.get("program_filename"))))
        with open(program, "w", encoding="utf-8") as f:
            f.write(str(header.get("program", "")))
        os.environ.update({str(k): str(v) for k, v in (header.get("env") or {}).items()})
        sys.path[:0] = [taskdir, self.compat_path]
        import importlib.util

        module_name = str(header.get("module", "evaluator"))
        spec = importlib.util.spec_from_file_location(
            module_name, os.path.join(taskdir, module_name + ".py")
        )
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load evaluator module {module_name!r}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
        func = getattr(module, str(header.get("function")))
        result = func(program)
        if hasattr(result, "__await__"):  # an ``async def evaluate`` (OpenEvolve's R example)
            import asyncio  # only then: start-up imports stay lean (tests/sandbox/test_jsonc.py)

            result = asyncio.run(result)
        return _compat_answer(result)


def _plain_or_text(value: Any) -> Any:
    try:
        encode_value(value)
    except UnsupportedType:
        return _safe_str(value)
    if type(value).__module__ == "numpy" and getattr(value, "ndim", 0) != 0:
        return _safe_str(value.tolist())
    return value


def _compat_answer(result: Any) -> tuple[dict[str, Any], bytes]:
    """An OpenEvolve return value (dict or EvaluationResult) as plain metrics and artifacts."""
    if isinstance(result, dict):
        metrics, artifacts = result, {}
    elif isinstance(getattr(result, "metrics", None), dict):
        metrics, artifacts = result.metrics, getattr(result, "artifacts", None) or {}
    else:
        raise TypeError(
            f"evaluate() returned {type(result).__name__}; expected a dict or EvaluationResult"
        )
    plain_metrics = {str(k): _plain_or_text(v) for k, v in metrics.items()}
    plain_artifacts = {}
    for k, v in dict(artifacts).items():
        if isinstance(v, bytes | bytearray):
            v = bytes(v).decode("utf-8", "replace")
        plain_artifacts[str(k)] = v if isinstance(v, str) else _safe_str(v)
    tree, blob = encode_value({"metrics": plain_metrics, "artifacts": plain_artifacts})
    return {"ok": True, "value": tree}, blob


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001, S110 - a broken stream has nothing to flush
            pass


def fresh_randomness() -> None:
    """Reseed numpy's global generator from the OS after a fork from a process that imported
    ``numpy.random``: a process of its own would start from fresh entropy too (the standard
    library's ``random`` reseeds itself at fork)."""
    random = sys.modules.get("numpy.random")
    if random is not None:
        try:
            random.seed()
        except Exception:  # noqa: BLE001, S110 - a broken numpy is the candidate's own problem
            pass


def serve(compat_path: str = "/opt/galapagos/compat", *, warm_python: bool = False) -> None:
    """Answer requests until the runner closes the request pipe.  ``warm_python``: after the
    first ``ping`` (before any job), fork the warm interpreter of :mod:`galapagos_sandbox.warm`."""
    fresh_randomness()
    try:
        sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    except Exception:  # noqa: BLE001, S110 - a replaced stdout keeps its own buffering
        pass
    worker = _Worker(compat_path)
    requests = FrameReader(REQUEST_FD, max_frame=MAX_REQUEST)
    while True:
        try:
            frame = requests.read()
        except Exception:  # noqa: BLE001 - a broken request stream ends the process
            os._exit(0)
        if frame is None:
            os._exit(0)
        header, blob = frame
        op = header.get("op")
        out = b""
        try:
            if op == "ping":
                # First compile in this process: pay the parser's start-up now, not at load.
                exec(compile("def _f(x):\n    return [x, (x,)]\n", "<ping>", "exec"), {})  # noqa: S102
                answer = {"ok": True}
            elif op == "load":
                answer = worker.load(header)
            elif op == "call":
                answer, out = worker.call(header, blob)
            elif op == "compat":
                answer, out = worker.compat(header, blob)
            else:
                answer = {"ok": False, "kind": "protocol", "message": f"unknown op {op!r}"}
        except UnsupportedType as exc:
            answer, out = {"ok": False, "kind": "bad_output", "message": _safe_str(exc)}, b""
        except (SystemExit, KeyboardInterrupt) as exc:
            answer, out = _error("exited", exc), b""
        except BaseException as exc:  # noqa: BLE001 - anything the candidate raises is data
            answer, out = _error("raised", exc), b""
        _flush()
        try:
            data = encode_frame(answer, out)
        except ValueError as exc:
            data = encode_frame({"ok": False, "kind": "bad_output", "message": _safe_str(exc)})
        write_all(RESPONSE_FD, data)
        if warm_python and op == "ping":
            warm_python = False
            try:
                from galapagos_sandbox import warm

                warm.start()
            except Exception:  # noqa: BLE001, S110 - without it, a real interpreter runs
                pass


def install_site_builtins() -> None:
    """``exit``/``quit`` as ``site`` would define them (containers run without ``site``)."""
    import builtins

    def leave(code: object = None) -> None:
        raise SystemExit(code)

    for name in ("exit", "quit"):
        if not hasattr(builtins, name):
            setattr(builtins, name, leave)


def main() -> None:
    """Entry point of a freshly exec'd candidate process (after a previous one died)."""
    install_site_builtins()
    serve(sys.argv[1] if len(sys.argv) > 1 else "/opt/galapagos/compat")


if __name__ == "__main__":
    main()
