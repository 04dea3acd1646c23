"""``StrategyClient``: typed requests to one strategy server over a :class:`Transport`.

Every call has a deadline.  A response that reports an error becomes
:class:`StrategyCallError` (a :class:`~harness.core.errors.StrategyError`) whose ``kind`` says
what went wrong:

=========  ===============================================================================
kind       meaning
=========  ===============================================================================
raised     the strategy's code raised (``error_type`` and ``traceback`` say what)
invalid    ``sample`` returned a malformed answer, or one the host rejected
load       the module does not import
structure  the module imports but lacks the classes/signature of a strategy
oom        the strategy ran out of memory (MemoryError, or the container was OOM-killed)
timeout    no answer within the deadline (the server was killed)
crash      the server process/container exited
protocol   the server sent something that is not a response to this request
limit      the judge stopped the server: a resource limit (CPU per call, memory, tasks) or a
           validation deadline (Valid(·) only; see ``strategy_tests``)
=========  ===============================================================================
"""

from __future__ import annotations

import itertools
from typing import Any

from harness.core.errors import StrategyError
from harness.sandbox.usage import Meter
from scaffolds.evox.transport import Transport

__all__ = ["StrategyCallError", "StrategyClient"]

#: Records per ``add`` request when a whole population is fed (migration, replay).
BATCH = 256


class StrategyCallError(StrategyError):
    def __init__(self, message: str, *, kind: str, error_type: str = "", traceback: str = ""):
        super().__init__(message, kind=kind)
        self.error_type = error_type
        self.traceback = traceback


class StrategyClient:
    def __init__(self, transport: Transport, *, deadline_s: float, start_s: float = 60.0):
        self.transport = transport
        self.deadline_s = deadline_s
        self.start_s = start_s
        self._ids = itertools.count(1)
        self.started = False

    async def start(self, deadline_s: float | None = None) -> None:
        await self.transport.start(deadline_s or self.start_s)
        self.started = True

    async def close(self) -> None:
        await self.transport.close()

    @property
    def meter(self) -> Meter | None:
        """Resource readings of the server from outside it (None before :meth:`start`)."""
        return self.transport.meter

    async def kill(self, error: StrategyError) -> None:
        """Stop the server now; the call in flight (if any) raises ``error``."""
        await self.transport.kill(error)

    async def request(self, op: str, *, deadline_s: float | None = None, **args: Any) -> Any:
        rid = next(self._ids)
        response = await self.transport.call(
            {"op": op, "id": rid, "args": args}, deadline_s or self.deadline_s
        )
        if response.get("ok") is True:
            return response.get("result")
        error = response.get("error")
        if not isinstance(error, dict):
            raise StrategyError("the strategy server sent a malformed error", kind="protocol")
        kind = str(error.get("kind", "raised"))
        if kind not in {"raised", "invalid", "load", "structure", "oom", "protocol"}:
            kind = "protocol"
        etype, message = str(error.get("type", "")), str(error.get("message", ""))
        text = f"{op}() failed: {etype}: {message}" if kind in {"raised", "oom"} else message
        raise StrategyCallError(
            text[:2000], kind=kind, error_type=etype, traceback=str(error.get("traceback", ""))
        )

    # -- operations (``deadline_s`` overrides the client's per-call deadline) -----------------
    async def load(
        self,
        source: str,
        labels: dict[str, str],
        seed: int,
        *,
        deadline_s: float | None = None,
    ) -> None:
        await self.request("load", source=source, labels=labels, seed=seed, deadline_s=deadline_s)

    async def new(
        self,
        handle: str = "main",
        *,
        name: str = "evox",
        config: str = "evox",
        deadline_s: float | None = None,
    ) -> None:
        await self.request("new", handle=handle, name=name, config=config, deadline_s=deadline_s)

    async def add(
        self,
        records: list[dict[str, Any]],
        *,
        handle: str = "main",
        base: bool = False,
        check: bool = False,
        deadline_s: float | None = None,
    ) -> dict[str, Any]:
        result = await self.request(
            "add", handle=handle, records=records, base=base, check=check, deadline_s=deadline_s
        )
        if not isinstance(result, dict) or not isinstance(result.get("ids"), list):
            raise StrategyError("the strategy server sent a malformed add answer", kind="protocol")
        return result

    async def add_many(
        self, records: list[dict[str, Any]], *, handle: str = "main", deadline_s: float
    ) -> None:
        """Feed many records in order, ``BATCH`` per request (each with its own deadline)."""
        for start in range(0, len(records), BATCH):
            await self.add(records[start : start + BATCH], handle=handle, deadline_s=deadline_s)

    async def sample(
        self,
        k: int | None,
        *,
        handle: str = "main",
        check: bool = False,
        deadline_s: float | None = None,
    ) -> dict[str, Any]:
        result = await self.request(
            "sample", handle=handle, k=k, check=check, deadline_s=deadline_s
        )
        if not isinstance(result, dict):
            raise StrategyError(
                "the strategy server sent a malformed sample answer", kind="protocol"
            )
        return result

    async def count(self, handle: str = "main", *, deadline_s: float | None = None) -> int:
        result = await self.request("count", handle=handle, deadline_s=deadline_s)
        if not isinstance(result, int) or isinstance(result, bool):
            raise StrategyError("the strategy server sent a malformed count", kind="protocol")
        return result

    async def get(
        self, pid: str, handle: str = "main", *, deadline_s: float | None = None
    ) -> dict[str, Any]:
        result = await self.request("get", handle=handle, id=pid, deadline_s=deadline_s)
        return result if isinstance(result, dict) else {}

    async def reseed(self, seed: int, *, deadline_s: float | None = None) -> None:
        await self.request("reseed", seed=seed, deadline_s=deadline_s)

    async def drop(self, handle: str, *, deadline_s: float | None = None) -> None:
        await self.request("drop", handle=handle, deadline_s=deadline_s)
