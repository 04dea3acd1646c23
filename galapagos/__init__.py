"""Galapagos from Python: LLM-driven program search, every candidate in a locked-down sandbox.

>>> import galapagos
>>> result = galapagos.run("topk", "circle_packing", iterations=5)
>>> print(result.best_score, result.best.code)

:func:`run` searches a :class:`Task` with a :class:`Scaffold` (names or folders work too) and
returns a :class:`Result`: the best program, the score history and the store the run lives in.
:func:`resume` continues a stopped run.  :func:`arun` and :func:`aresume` are the same for code
that runs an event loop.  See docs/python-api.md.

The distribution is ``galapagos``; the implementation is the ``harness`` package.
"""

from __future__ import annotations

from galapagos._api import (
    Progress,
    Result,
    Scaffold,
    Task,
    aresume,
    arun,
    open_store,
    resume,
    run,
)
from harness import __version__

__all__ = [
    "Progress",
    "Result",
    "Scaffold",
    "Task",
    "__version__",
    "aresume",
    "arun",
    "open_store",
    "resume",
    "run",
]
