"""How fast the hub stops with a live stream open, and how fresh the stream is.

Starts ``galapagos serve`` on a temporary store (offline model, local sandbox), launches a long
run, holds its event stream open, and prints: the delay between an iteration's commit (the
event's stored time) and its arrival on the stream, and the seconds from SIGINT to the
process's exit.  Run: ``.venv/bin/python bench/serve_shutdown.py [--rounds N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def one_round(tmp: Path) -> tuple[list[float], float]:
    store = tmp / f"s{time.monotonic_ns()}.sqlite"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "GALAPAGOS_"))}
    cli = [sys.executable, "-m", "harness.cli"]
    token = subprocess.run(
        [*cli, "token", "create", "bench", "--store", str(store)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=ROOT,
    ).stdout.strip()
    port = _port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [*cli, "serve", "--port", str(port), "--store", str(store), "--allow-local-sandbox"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=ROOT,
    )
    try:
        for _ in range(300):
            try:
                httpx.get(url + "/api/v1/status", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        run = httpx.post(
            url + "/api/v1/runs",
            headers={"Authorization": f"Bearer {token}"},
            json={
                "task": "function_minimization",
                "scaffold": "topk",
                "iterations": 500,
                "overrides": ["evaluator.sandbox=local"],
            },
        ).json()["run"]["run_id"]
        delays: list[float] = []

        def listen() -> None:
            with httpx.stream("GET", f"{url}/api/v1/runs/{run}/stream", timeout=60) as s:
                event = ""
                for line in s.iter_lines():
                    if line.startswith("event: "):
                        event = line[7:]
                    elif line.startswith("data: ") and event == "event":
                        delays.append(time.time() - json.loads(line[6:])["created_at"])

        listener = threading.Thread(target=listen, daemon=True)
        listener.start()
        time.sleep(4)
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        proc.wait(60)
        return delays, time.monotonic() - started
    finally:
        if proc.poll() is None:
            proc.kill()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(args.rounds):
            delays, stop_s = one_round(Path(tmp))
            fresh = [d * 1000 for d in delays[len(delays) // 4 :]]  # past the first catch-up
            print(
                f"round {n + 1}: {len(delays)} events streamed; commit→stream delay median "
                f"{statistics.median(fresh):.1f} ms, max {max(fresh):.1f} ms; SIGINT→exit "
                f"{stop_s:.2f} s with the stream open"
            )


if __name__ == "__main__":
    main()
