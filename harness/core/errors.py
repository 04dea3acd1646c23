"""The one exception tree of the harness.

    HarnessError
    ├── ConfigError          bad config, unknown scaffold/task/key (lists the valid choices)
    ├── TaskError            a task folder or card that cannot be loaded
    ├── StoreError           the run store cannot be read or written
    │   └── RunNotFound
    ├── SandboxError         broken sandbox infrastructure (never a candidate's failure)
    │   ├── SandboxUnavailable   no engine / image; names the setup command
    │   │   └── EngineUnavailable  the engine stayed unreachable past the run's wait deadline
    │   └── InfrastructureFault  one evaluation met an engine fault (retried, never scored)
    ├── LLMError             the model endpoint failed after retries
    │   ├── LLMTimeout
    │   └── LLMUnavailable   endpoint unreachable
    ├── BudgetExhausted      the run's token/cost budget is spent (a clean stop)
    ├── RunFailed            the run cannot usefully go on (seed not evaluable, repeated
    │                        infrastructure failures); stored as failed, with the remedy
    └── StrategyError        an EvoX strategy failed (crash, timeout, invalid answer)

A candidate program's failure is data (``EvalResult.status``), never an exception: exceptions
mean broken infrastructure or bad input.  Every message names the object and says what to do.
"""

from __future__ import annotations

__all__ = [
    "BudgetExhausted",
    "ConfigError",
    "EngineUnavailable",
    "HarnessError",
    "InfrastructureFault",
    "LLMError",
    "LLMTimeout",
    "LLMUnavailable",
    "RunFailed",
    "RunNotFound",
    "SandboxError",
    "SandboxUnavailable",
    "StoreError",
    "StrategyError",
    "TaskError",
]


class HarnessError(Exception):
    """Base of every error the harness raises on purpose."""

    #: Process exit code the CLI uses for this error (1 = runtime failure, 2 = bad input).
    exit_code: int = 1


class ConfigError(HarnessError):
    exit_code = 2


class TaskError(HarnessError):
    exit_code = 2


class StoreError(HarnessError):
    pass


class RunNotFound(StoreError):
    exit_code = 2


class SandboxError(HarnessError):
    pass


class SandboxUnavailable(SandboxError):
    pass


class EngineUnavailable(SandboxUnavailable):
    """The Docker engine did not come back within the wait deadline: the run stops as
    interrupted (resumable) instead of charging its candidates."""


class InfrastructureFault(SandboxError):
    """An evaluation was cut short by the infrastructure (engine restarting or unreachable, the
    container removed or killed from outside, the attach stream broken before the job was
    delivered, the image missing): retried on a fresh container, never the candidate's result."""


class LLMError(HarnessError):
    pass


class LLMTimeout(LLMError):
    pass


class LLMUnavailable(LLMError):
    pass


class BudgetExhausted(HarnessError):
    pass


class RunFailed(HarnessError):
    """The controller stopped a run that cannot usefully go on; the message says why and what
    to do, ``reason`` says it as data (``seed_failed``, ``infra_streak``).  The run is stored as
    ``failed`` (``galapagos resume`` continues it once fixed)."""

    def __init__(self, message: str, *, reason: str = "error") -> None:
        super().__init__(message)
        self.reason = reason


class StrategyError(HarnessError):
    """An EvoX strategy misbehaved; ``kind`` says how (crash, timeout, invalid, protocol, oom)."""

    def __init__(self, message: str, *, kind: str = "crash") -> None:
        super().__init__(message)
        self.kind = kind
