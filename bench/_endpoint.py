"""One OpenAI-compatible fake endpoint shared by every program a benchmark compares.

It is Galapagos' offline model (a mutation operator, not an LLM: SEARCH/REPLACE edits of numeric
literals), served in its own process so that none of the compared programs pays for it in its own
process, optionally answering each request only after ``--latency`` seconds (``asyncio.sleep``:
concurrent requests wait concurrently, as with a remote model).

    python bench/_endpoint.py [--seed 42] [--latency 0.5]

prints the base URL on its first line and serves until stdin closes.  :func:`shared_endpoint` does
that from Python.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


class _Latency:
    """ASGI middleware: every HTTP request waits ``seconds`` before it is handled."""

    def __init__(self, app: Any, seconds: float) -> None:
        self.app, self.seconds = app, seconds

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") == "http" and self.seconds > 0:
            await asyncio.sleep(self.seconds)
        await self.app(scope, receive, send)


def serve(seed: int, latency: float) -> None:
    sys.path.insert(0, str(ROOT))
    from harness.llm.offline.server import OfflineServer, create_app

    server = OfflineServer(_Latency(create_app(seed=seed), latency))
    server.app.state = server.app.app.state  # OfflineServer.requests reads app.state
    server.start()
    print(server.base_url, flush=True)
    sys.stdin.read()  # until the parent closes our stdin (or dies)
    server.close()


@contextlib.contextmanager
def shared_endpoint(seed: int = 42, latency: float = 0.0) -> Iterator[str]:
    """Run the endpoint in a child process for the ``with`` block; yields its base URL."""
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__)), "--seed", str(seed), "--latency", str(latency)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert proc.stdout is not None and proc.stdin is not None
    url = proc.stdout.readline().strip()
    if not url.startswith("http"):
        proc.kill()
        raise SystemExit("the shared endpoint did not start")
    drain = threading.Thread(target=proc.stdout.read, daemon=True)
    drain.start()
    try:
        yield url
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per request")
    args = parser.parse_args()
    serve(args.seed, args.latency)


if __name__ == "__main__":
    main()
