"""The judge: every Valid(·) call timed, metered and bounded from outside the strategy's process.

The strategy runs in its own sandbox and process (own uid) and answers over a channel; nothing it
reports about itself is believed.  For every call the judge

- reads the sandbox's CPU time, memory high-water mark and task count from the kernel before and
  after (:mod:`harness.sandbox.usage`: the container's cgroup as the host sees it, or
  ``/proc/<pid>`` of a local server), and the wall time from the host's clock;
- polls the same counters while the call runs and **stops the call** (kills the sandbox) the
  moment it has used more than ``max_call_s`` of CPU or the sandbox holds more than
  ``max_tasks`` threads and processes — from the very first call, not after a stress run;
- after the call, rejects a memory high-water mark above ``max_rss_mb`` (the kernel's own peak,
  so a strategy that fakes ``resource``/``/proc/self`` readings still shows its real one);
- bounds each call's deadline by what is left of the current check's budget and of the overall
  deadline, so a validation ends within ``deadline_s`` whatever the strategy does.

A crossed bound is :class:`LimitExceeded` (a ``StrategyError`` of kind ``limit``) naming the
check it belongs to (``call_time``, ``memory``, ``threads``) or the budget that ran out.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from harness.core.errors import StrategyError

if TYPE_CHECKING:
    from harness.sandbox.usage import Meter, Quota, Usage
    from scaffolds.evox.client import StrategyClient
    from scaffolds.evox.valid import ValidConfig

__all__ = ["CLOSE_MARGIN_S", "Judge", "LimitExceeded", "POLL_S"]

T = TypeVar("T")
#: How often the counters are read while a call runs (seconds).
POLL_S = 0.05
#: Kept back from the overall deadline for stopping and removing the sandbox.
CLOSE_MARGIN_S = 3.0
MIB = 1 << 20


class LimitExceeded(StrategyError):
    """The judge stopped the strategy.  ``limit`` is the check whose bound was crossed
    (``call_time``, ``memory``, ``threads``), ``deadline`` for the overall deadline, or the
    name of the check whose budget ran out."""

    def __init__(self, limit: str, message: str) -> None:
        super().__init__(message, kind="limit")
        self.limit = limit


@dataclass(frozen=True)
class CallCost:
    what: str
    cpu_s: float
    wall_s: float


class Judge:
    def __init__(self, config: ValidConfig, started: float) -> None:
        self.config = config
        self.started = started
        self.end = started + config.deadline_s - CLOSE_MARGIN_S
        self.check = ""
        self.check_budget = config.check_s
        self.check_end = self.end
        self.client: StrategyClient | None = None
        self.meter: Meter | None = None
        self.quota: Quota | None = None
        self.last: Usage | None = None
        self.calls = 0
        self.slowest = CallCost("", 0.0, 0.0)

    # -- setup and budgets ---------------------------------------------------------------------
    def attach(self, client: StrategyClient) -> None:
        """Start judging ``client`` (after it started: its meter exists from then on)."""
        self.client = client
        self.meter = client.meter
        self.quota = self.meter.quota() if self.meter is not None else None

    def begin(self, check: str) -> None:
        self.check = check
        self.check_budget = self.config.stress_s if check == "stress" else self.config.check_s
        self.check_end = min(time.monotonic() + self.check_budget, self.end)

    def left(self, *, overall: bool = False) -> float:
        return (self.end if overall else self.check_end) - time.monotonic()

    def out_of_time(self) -> LimitExceeded:
        if self.check_end >= self.end:
            return LimitExceeded(
                "deadline",
                f"validation ran out of its overall deadline of {self.config.deadline_s:g} s; "
                "every add()/sample() must be fast (well under 100 ms at 1,000 programs)",
            )
        return LimitExceeded(
            self.check,
            f"the check ran out of its budget of {self.check_budget:g} s; every add()/sample() "
            "must be fast (well under 100 ms at 1,000 programs)",
        )

    # -- one call ------------------------------------------------------------------------------
    async def call(self, what: str, make: Callable[[float], Awaitable[T]]) -> T:
        """Run ``make(deadline_s)`` (one RPC) under the judge's eye and bounds."""
        assert self.client is not None
        remaining = self.left()
        if remaining <= 0:
            raise self.out_of_time()
        cap = self.client.deadline_s
        deadline = min(cap, remaining)
        before = await self._read()
        watch = asyncio.create_task(self._watch(what, before)) if before is not None else None
        started = time.monotonic()
        try:
            result = await make(deadline)
        except LimitExceeded:
            raise
        except StrategyError as exc:
            if exc.kind == "timeout" and deadline < cap:
                raise self.out_of_time() from None
            # A crash or an OOM kill may be the end of a bomb: the readings say which.
            after = await self._read()
            if before is not None and after is not None:
                self._enforce(what, before, after)
            raise
        finally:
            if watch is not None:
                watch.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watch
        wall = time.monotonic() - started
        after = await self._read()
        self.calls += 1
        if before is None or after is None:  # no meter: wall time is all there is
            if wall > self.slowest.wall_s:
                self.slowest = CallCost(what, 0.0, wall)
            return result
        cpu = after.cpu_s - before.cpu_s
        if cpu > self.slowest.cpu_s or not self.slowest.what:
            self.slowest = CallCost(what, cpu, wall)
        self._enforce(what, before, after)
        return result

    async def _read(self) -> Usage | None:
        if self.meter is None:
            return None
        usage = self.meter.read() if self.meter.cheap else await asyncio.to_thread(self.meter.read)
        self.last = usage
        return usage

    async def _watch(self, what: str, before: Usage) -> None:
        """While a call runs: stop it the moment it crosses the CPU or task bound."""
        assert self.client is not None
        while True:
            await asyncio.sleep(POLL_S)
            usage = await self._read()
            if usage is None:
                continue
            error = self._cpu(what, before, usage, during=True) or self._tasks(what, usage)
            if error is not None:
                await self.client.kill(error)
                return

    def _enforce(self, what: str, before: Usage, after: Usage) -> None:
        error = (
            self._cpu(what, before, after, during=False)
            or self._tasks(what, after)
            or self._memory(what, after)
        )
        if error is not None:
            raise error

    def _cpu(self, what: str, before: Usage, now: Usage, *, during: bool) -> LimitExceeded | None:
        cpu = now.cpu_s - before.cpu_s
        if cpu <= self.config.max_call_s:
            return None
        how = " and was stopped" if during else ""
        return LimitExceeded(
            "call_time",
            f"{what} used {cpu:.2f} s of CPU{how}; each call may use at most "
            f"{self.config.max_call_s:g} s (CPU time of the strategy's sandbox, read by the host)",
        )

    def _tasks(self, what: str, now: Usage) -> LimitExceeded | None:
        if now.tasks_peak <= self.config.max_tasks and not now.pids_limit_hits:
            return None
        hit = " and hit the sandbox's pids limit" if now.pids_limit_hits else ""
        return LimitExceeded(
            "threads",
            f"the strategy's sandbox ran {now.tasks_peak} threads and processes during "
            f"{what}{hit}; at most {self.config.max_tasks} are allowed (a strategy starts no "
            "threads or processes)",
        )

    def _memory(self, what: str, now: Usage) -> LimitExceeded | None:
        peak = now.memory_peak_bytes / MIB
        if peak <= self.config.max_rss_mb:
            return None
        return LimitExceeded(
            "memory",
            f"the strategy's sandbox peaked at {peak:.0f} MiB of memory by the end of {what}; at "
            f"most {self.config.max_rss_mb} MiB is allowed (the kernel's high-water mark, read "
            "by the host)",
        )

    # -- the report ------------------------------------------------------------------------------
    def resources(self) -> dict[str, Any]:
        """What the sandbox was allowed and what it used, as the host read it."""
        out: dict[str, Any] = {
            "readings": self.meter.source if self.meter is not None else "none",
            "calls": self.calls,
            "slowest_call": {
                "op": self.slowest.what,
                "cpu_s": round(self.slowest.cpu_s, 4),
                "wall_s": round(self.slowest.wall_s, 4),
            },
            "max_call_cpu_s": self.config.max_call_s,
            "max_memory_mb": self.config.max_rss_mb,
            "max_tasks": self.config.max_tasks,
        }
        if self.quota is not None:
            out["sandbox"] = {
                "cpus": self.quota.cpus,
                "memory_mb": None
                if self.quota.memory_bytes is None
                else round(self.quota.memory_bytes / MIB),
                "pids": self.quota.pids,
            }
        if self.last is not None:
            out["cpu_s"] = round(self.last.cpu_s, 3)
            out["peak_memory_mb"] = round(self.last.memory_peak_bytes / MIB, 1)
            out["peak_tasks"] = self.last.tasks_peak
        return out
