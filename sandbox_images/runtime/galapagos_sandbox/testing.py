"""In-process test double of the candidate handle, for unit tests of task evaluators.

**Trusted inputs only**: the program runs in the test's own process with no isolation, no
timeout and no memory limit.  What it does reproduce is the data contract: arguments and
answers go through the same plain-data codec as in the sandbox (tuples become lists, numpy
scalars Python numbers, numeric arrays stay arrays, anything else is ``CandidateBadOutput``),
and failures raise the same :class:`~galapagos_sandbox.errors.CandidateError` subclasses::

    from galapagos_sandbox.testing import InProcessCandidate, evaluate_in_process

    cand = InProcessCandidate("def solve(xs):\\n    return sorted(xs)\\n")
    assert evaluator.evaluate(cand)["combined_score"] == 1.0
"""

from __future__ import annotations

import sys
import traceback
import types
from collections.abc import Callable
from typing import Any

from galapagos_sandbox.errors import CandidateBadOutput, CandidateCrashed, CandidateRaised
from galapagos_sandbox.schema import normalize_result
from galapagos_sandbox.wire import UnsupportedType, decode_value, encode_value

__all__ = ["InProcessCandidate", "evaluate_in_process", "to_plain"]


def to_plain(value: Any) -> Any:
    """``value`` as it would arrive through the sandbox; raises CandidateBadOutput."""
    try:
        tree, blob = encode_value(value)
    except UnsupportedType as exc:
        raise CandidateBadOutput(f"returned {exc}") from None
    return decode_value(tree, bytearray(blob))


class InProcessCandidate:
    """Same interface as the sandbox's ``Candidate``; ``timeout`` is accepted and ignored."""

    def __init__(self, source: str, filename: str = "program.py") -> None:
        self.source = source
        self.filename = filename
        self.time_left: float | None = None
        self._module: types.ModuleType | None = None

    def _load(self) -> types.ModuleType:
        if self._module is None:
            module = types.ModuleType(f"_galapagos_candidate_{id(self):x}")
            module.__file__ = self.filename
            sys.modules[module.__name__] = module
            try:
                # As the sandbox compiles it: without this module's ``__future__`` flags.
                code = compile(self.source, self.filename, "exec", dont_inherit=True)
                exec(code, module.__dict__)  # noqa: S102
            except SystemExit as exc:
                raise CandidateCrashed(
                    f"the candidate exited (status {exc.code}) while loading"
                ) from None
            except Exception as exc:  # noqa: BLE001 - reported like the sandbox does
                raise self._raised("loading", exc) from None
            self._module = module
        return self._module

    @staticmethod
    def _raised(what: str, exc: BaseException) -> CandidateRaised:
        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-4000:]
        name = type(exc).__name__
        return CandidateRaised(f"{what} raised {name}: {exc}", exc_type=name, traceback=tb)

    def stdout_tail(self) -> str:
        return ""

    def call(self, name: str, *args: Any, timeout: float | None = None) -> Any:
        module = self._load()
        func = getattr(module, name, None)
        if not callable(func):
            raise CandidateRaised(
                f"{name}() raised AttributeError: the program defines no function {name!r}",
                exc_type="AttributeError",
            )
        plain_args = to_plain(list(args))
        try:
            value = func(*plain_args)
        except SystemExit as exc:
            raise CandidateCrashed(
                f"the candidate exited (status {exc.code}) during {name}()"
            ) from None
        except Exception as exc:  # noqa: BLE001 - reported like the sandbox does
            raise self._raised(f"{name}()", exc) from None
        return to_plain(value)


def evaluate_in_process(
    evaluate: Callable[[Any], Any], source: str, filename: str = "program.py"
) -> tuple[dict[str, Any], dict[str, str]]:
    """Run a sealed ``evaluate(candidate)`` on ``source`` in-process; (metrics, artifacts)."""
    return normalize_result(evaluate(InProcessCandidate(source, filename)))
