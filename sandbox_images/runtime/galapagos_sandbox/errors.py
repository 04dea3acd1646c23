"""Candidate failures as seen by a trusted evaluator.

    CandidateError              anything that went wrong on the candidate's side of a call
    ├── CandidateTimeout        the call (or the job) ran out of time; the candidate was killed
    ├── CandidateCrashed        the candidate process died or exited during the call
    │   └── CandidateOOM        ... killed by the kernel for exceeding the memory limit
    ├── CandidateRaised         the candidate's function raised; ``exc_type`` and ``traceback``
    ├── CandidateBadOutput      the answer was not plain data ("unsupported type ...")
    └── CandidateOutputLimit    the candidate printed more than the output cap; it was killed

An evaluator may catch these (e.g. to score a partial answer); if one escapes the evaluator, the
runner reports the job with the error's ``status`` (timeout, crash, oom, invalid, output_limit).
"""

from __future__ import annotations

__all__ = [
    "CandidateBadOutput",
    "CandidateCrashed",
    "CandidateError",
    "CandidateOOM",
    "CandidateOutputLimit",
    "CandidateRaised",
    "CandidateTimeout",
]


class CandidateError(Exception):
    """Base class; ``status`` is the job status used when the error escapes the evaluator."""

    status = "crash"

    def __init__(self, message: str, *, traceback: str = "") -> None:
        super().__init__(message)
        self.message = message
        #: Tail of the candidate's traceback (empty when there is none).
        self.traceback = traceback


class CandidateTimeout(CandidateError):
    status = "timeout"


class CandidateCrashed(CandidateError):
    status = "crash"

    def __init__(self, message: str, *, exit_code: int | None = None, traceback: str = "") -> None:
        super().__init__(message, traceback=traceback)
        #: Exit status (negative: killed by that signal), when known.
        self.exit_code = exit_code


class CandidateOOM(CandidateCrashed):
    status = "oom"


class CandidateRaised(CandidateError):
    status = "crash"

    def __init__(self, message: str, *, exc_type: str = "Exception", traceback: str = "") -> None:
        super().__init__(message, traceback=traceback)
        #: Name of the exception class the candidate raised (``ValueError`` …).
        self.exc_type = exc_type


class CandidateBadOutput(CandidateError):
    status = "invalid"


class CandidateOutputLimit(CandidateError):
    status = "output_limit"
