"""Small sealed evaluators and job builders shared by the sandbox tests."""

from __future__ import annotations

from typing import Any

from harness.sandbox.protocol import Job, Limits

#: Calls ``solve()`` and scores whatever number it returns; ``probe`` reports text as a metric.
EVALUATOR = b"""
from galapagos_sandbox import CandidateError

def evaluate(candidate):
    return {"combined_score": float(candidate.call("solve"))}

def probe(candidate):
    return {"combined_score": 0.0, "report": candidate.call("solve")}
"""

#: Small limits so that timeouts and memory bombs end quickly.
SMALL = Limits(wall_s=3.0, memory_mb=192, pids=32, output_bytes=64 * 1024, tmpfs_mb=16, fsize_mb=4)


def sealed_job(
    candidate: str,
    *,
    function: str = "evaluate",
    evaluator: bytes = EVALUATOR,
    limits: Limits = SMALL,
    **kw: Any,
) -> Job:
    return Job(
        mode="sealed",
        function=function,
        candidate=candidate,
        files={"evaluator.py": evaluator},
        limits=limits,
        **kw,
    )


def program(body: str, imports: str = "") -> str:
    """A candidate whose ``solve()`` runs ``body`` (indented by the caller's convention)."""
    lines = "\n".join("    " + line for line in body.strip("\n").splitlines())
    return f"{imports}\ndef solve():\n{lines}\n"


HISTORY_EVALUATOR = b"""
from galapagos_sandbox import CandidateError

def _error(candidate):
    try:
        candidate.call("boom")
    except CandidateError as exc:
        return exc.traceback
    return "-"

def evaluate(candidate):
    first = _error(candidate)  # the pre-forked candidate process
    try:
        candidate.call("leave")  # it exits: the next call gets a fresh process (another pid)
    except CandidateError:
        pass
    return {"combined_score": 0.0, "first": first, "again": _error(candidate)}
"""

HISTORY_SOURCE = (
    "import os\ndef leave():\n    os._exit(3)\ndef boom():\n    raise ValueError('no luck')\n"
)


def assert_feedback_independent_of_process_history(result: object) -> None:
    """A failure's text (traceback paths included) is what the LLM reads next: it must not
    depend on which process of the container ran the program (a pid in the candidate's
    directory made a benchmark cell differ from the same run on its own)."""
    assert result.status == "ok", result.error  # type: ignore[attr-defined]
    first, again = result.artifacts["first"], result.artifacts["again"]  # type: ignore[attr-defined]
    assert "ValueError: no luck" in first and 'File "program.py", line 5, in boom' in first, first
    assert "    raise ValueError('no luck')" in first, first  # the source line is shown
    assert first == again
