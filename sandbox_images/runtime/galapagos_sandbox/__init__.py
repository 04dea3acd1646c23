"""In-sandbox runtime of Galapagos: the trusted runner, the candidate handle, compat shims.

Stdlib only (numpy when present).  Task evaluators use::

    from galapagos_sandbox import CandidateError, EvaluationResult

    def evaluate(candidate):
        answer = candidate.call("solve", data, timeout=5)   # plain data back
        ...

Unit tests of evaluators use :mod:`galapagos_sandbox.testing` (trusted inputs only).
"""

from __future__ import annotations

from galapagos_sandbox.errors import (
    CandidateBadOutput,
    CandidateCrashed,
    CandidateError,
    CandidateOOM,
    CandidateOutputLimit,
    CandidateRaised,
    CandidateTimeout,
)
from galapagos_sandbox.result import EvaluationResult

__all__ = [
    "CandidateBadOutput",
    "CandidateCrashed",
    "CandidateError",
    "CandidateOOM",
    "CandidateOutputLimit",
    "CandidateRaised",
    "CandidateTimeout",
    "EvaluationResult",
    "__version__",
]

#: Bumped when the job/result protocol changes incompatibly.
__version__ = "1"
