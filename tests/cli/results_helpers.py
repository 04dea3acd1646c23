"""Task folders and endpoints for the results tests: small tasks written as a user would, and a
stand-in OpenAI-compatible endpoint (the offline model's server under any model name) that can
be made to fail."""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.llm.offline import OfflineServer, create_app

SPREAD_SEED = """\
# EVOLVE-BLOCK-START
def solve():
    return [0.1, 0.3, 0.6]
# EVOLVE-BLOCK-END
"""

SPREAD_SCORE = """\
def min_dist(xs):
    xs = sorted(float(x) for x in xs)
    return min(b - a for a, b in zip(xs, xs[1:]))
"""


def task_folder(
    root: Path,
    name: str,
    evaluate_body: str,
    *,
    metric: str | None = "min_dist",
    direction: str = "maximize",
    seed: str = SPREAD_SEED,
) -> Path:
    """A native task: three numbers in [0, 1], scored by ``evaluate_body`` (``xs`` is the
    candidate's answer, ``min_dist`` the helper above)."""
    folder = root / name
    folder.mkdir(parents=True)
    card = {
        "name": name,
        "description": "Return three numbers in [0, 1] as far apart as possible.",
        "objective": f"{direction} the smallest gap",
        "direction": direction,
        "entry_point": "solve",
        "best_known": {"value": 0.5, "source": "three points: 0, 0.5, 1"},
        "validity": "three finite numbers in [0, 1]",
        **({"metric": metric} if metric else {}),
    }
    (folder / "task.yaml").write_text(json.dumps(card, indent=2))
    (folder / "initial_program.py").write_text(seed)
    body = textwrap.indent(textwrap.dedent(evaluate_body).strip(), "    ")
    (folder / "evaluator.py").write_text(
        f"{SPREAD_SCORE}\n\ndef evaluate(candidate):\n    xs = candidate.call('solve')\n{body}\n"
    )
    return folder


def compat_folder(root: Path, name: str) -> Path:
    """An OpenEvolve-style folder whose evaluator returns two metrics and no combined_score."""
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "initial_program.py").write_text(
        "# EVOLVE-BLOCK-START\ndef solve():\n    return 0.2\n# EVOLVE-BLOCK-END\n"
    )
    (folder / "evaluator.py").write_text(
        "import importlib.util\n\n\n"
        "def evaluate(program_path):\n"
        "    spec = importlib.util.spec_from_file_location('p', program_path)\n"
        "    module = importlib.util.module_from_spec(spec)\n"
        "    spec.loader.exec_module(module)\n"
        "    return {'quality': float(module.solve()), 'speed': 0.5}\n"
    )
    return folder


@dataclass
class Gate:
    """Lets the first ``ok`` chat completions through, then answers HTTP 503."""

    ok: int
    calls: int = 0
    refused: list[int] = field(default_factory=list)


def stand_in(gate: Gate | None = None, *, seed: int = 0) -> OfflineServer:
    """The offline model's server on loopback, standing in for a real endpoint (any model name
    is served); with a ``gate``, chat completions fail with 503 once it closes."""
    app = create_app(seed=seed)
    if gate is None:
        return OfflineServer(app).start()

    async def gated(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"].endswith("/chat/completions"):
            gate.calls += 1
            if gate.calls > gate.ok:
                gate.refused.append(gate.calls)
                body = b'{"error": {"message": "the endpoint is down", "type": "server_error"}}'
                headers = [(b"content-type", b"application/json")]
                await send({"type": "http.response.start", "status": 503, "headers": headers})
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)

    return OfflineServer(gated).start()
