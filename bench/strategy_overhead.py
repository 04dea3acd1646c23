"""Per-call latency of an EvoX strategy behind its sandbox vs. the same strategy in-process.

For each population size the strategy is fed that many programs first (not timed), then
``--calls`` iterations of the runtime pattern are timed call by call: ``sample(4)`` followed by
``add`` of one new program (a realistic ~3 KB solution).  The in-process baseline runs the
very same server code (``galapagos_strategy``) without transport; the sandboxed side goes
through the host client, the framing and the container's attach socket (``docker``) or pipes
(``local``).  Added latency = sandboxed median − in-process median.

    python bench/strategy_overhead.py [--sizes 100 1000] [--calls 300] [--sandbox docker]
        [--strategy FILE]   (default: the built-in seed strategy)
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.core.records import Program  # noqa: E402
from harness.sandbox import _runtime  # noqa: E402
from scaffolds.evox.factory import ContainerLimits, make_factory  # noqa: E402
from scaffolds.evox.records import Labels, program_record  # noqa: E402

sys.path.append(str(_runtime.COMPAT_DIR))  # the shims, for the in-process baseline only
from galapagos_strategy.server import dispatch  # noqa: E402
from galapagos_strategy.session import Session  # noqa: E402

SOLUTION = "".join(
    f"    value_{i} = compute({i}) * 0.5  # a line of a realistic program\n" for i in range(60)
)


def program(i: int) -> dict[str, Any]:
    p = Program(
        id=f"p{i}",
        code=f"def solve():\n{SOLUTION}",
        iteration=i,
        metrics={"combined_score": (i * 37 % 101) / 100, "validity": 1.0},
        score=(i * 37 % 101) / 100,
        parent_id=f"p{max(0, i - 1)}" if i else None,
        inspiration_ids=(f"p{i // 2}",) if i else (),
    )
    return program_record(p, Labels())


async def timed(call: Callable[[], Awaitable[Any]]) -> float:
    started = time.perf_counter()
    await call()
    return time.perf_counter() - started


async def measure(
    request: Callable[..., Awaitable[Any]], size: int, calls: int
) -> dict[str, list[float]]:
    await request("new", handle="main", name="evox", config="evox")
    records = [program(i) for i in range(size)]
    for start in range(0, size, 256):
        await request("add", handle="main", records=records[start : start + 256])
    out: dict[str, list[float]] = {"sample": [], "add": []}
    for i in range(calls):
        out["sample"].append(await timed(lambda: request("sample", handle="main", k=4)))
        rec = program(size + i)
        out["add"].append(await timed(lambda rec=rec: request("add", handle="main", records=[rec])))
    await request("drop", handle="main")
    return out


async def in_process(source: str, size: int, calls: int) -> dict[str, list[float]]:
    session = Session()

    async def request(op: str, **args: Any) -> Any:
        return dispatch(session, op, args)

    await request("load", source=source, labels={}, seed=0)
    return await measure(request, size, calls)


async def sandboxed(source: str, size: int, calls: int, sandbox: str) -> dict[str, list[float]]:
    factory = make_factory(sandbox)  # type: ignore[arg-type]
    client = factory.client(ContainerLimits(call_s=10.0, bulk_s=60.0))
    await client.start()
    try:
        await client.load(source, {}, 0)
        return await measure(client.request, size, calls)
    finally:
        await client.close()
        factory.close()


def ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--sandbox", choices=["docker", "local"], default="docker")
    parser.add_argument("--strategy", type=Path, default=None)
    args = parser.parse_args()
    path = args.strategy or _runtime.RUNTIME_DIR / "galapagos_strategy" / "seed_strategy.py"
    source = path.read_text()
    print(f"strategy {path.name}, sandbox {args.sandbox}, {args.calls} timed calls of each kind")
    print(
        f"{'programs':>8} {'call':>6} {'in-process p50':>15} {'sandbox p50':>12} "
        f"{'sandbox p90':>12} {'added p50':>10}"
    )
    for size in args.sizes:
        base = await in_process(source, size, args.calls)
        box = await sandboxed(source, size, args.calls, args.sandbox)
        for call in ("sample", "add"):
            p50_in, p50_box = statistics.median(base[call]), statistics.median(box[call])
            print(
                f"{size:>8} {call:>6} {1000 * p50_in:>12.3f} ms {1000 * p50_box:>9.3f} ms "
                f"{ms(box[call], 0.9):>9.3f} ms {1000 * (p50_box - p50_in):>7.3f} ms"
            )


if __name__ == "__main__":
    asyncio.run(main())
