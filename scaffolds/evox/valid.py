"""What Valid(·) may spend and allow: the gate's limits, budgets and its sandbox.

The suite itself is the top-level ``strategy_tests`` package; it receives this config (and a
factory of strategy clients) from its caller, so neither package imports the other at run time:
the evolver gets Valid(·) injected, the suite gets the clients injected.

Every figure here is judged from outside the strategy's process (see ``strategy_tests.judge``):
CPU time, memory and tasks come from the kernel's accounting of the sandbox, time from the host's
clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from scaffolds.evox.factory import ContainerLimits

__all__ = ["ValidConfig"]


@dataclass(frozen=True)
class ValidConfig:
    #: Programs added one by one in the stress check, with a ``sample`` every ``stress_every``.
    stress_programs: int = 1000
    stress_every: int = 10
    #: CPU seconds one call may use, enforced on every call from the first one: the judge stops
    #: the call when the sandbox has spent this much CPU on it.
    max_call_s: float = 1.0
    #: Peak memory of the strategy's sandbox (the kernel's high-water mark of its cgroup, or of
    #: the process's resident set in the local sandbox), checked after every call.
    max_rss_mb: int = 256
    #: Threads and processes in the sandbox (the server needs 1, plus the container's init);
    #: checked while every call runs.
    max_tasks: int = 4
    determinism_samples: int = 8
    #: The whole validation, sandbox start and removal included.
    deadline_s: float = 180.0
    #: Budget of each check (wall time); the stress check has its own.
    check_s: float = 30.0
    stress_s: float = 120.0
    #: The validation sandbox.  Its per-call deadline (``call_s``) stops calls that hang
    #: without using CPU; its quota and pids limit bound what the strategy can take.
    limits: ContainerLimits = field(
        default_factory=lambda: ContainerLimits(memory_mb=512, call_s=10.0, bulk_s=60.0)
    )
    seed: int = 1234
