"""The controller's own time per iteration, per scaffold, at 1k and 10k programs.

No LLM and a trivial evaluator: an instant in-process model answers every prompt with a valid
one-line SEARCH/REPLACE edit of the parent, and the evaluator returns a seeded random score.
What remains is the loop itself: selection, prompt rendering, diff application, admission,
observe hooks, events, and the per-iteration SQLite transaction with its checkpoint (every
iteration writes one: a delta against the last, see ``harness.store.sqlite``).  Printed per
scaffold and size: median, p95 and mean wall time per iteration and the median CPU time of this
process (robust on a shared machine; EvoX's strategy container is not in it), then a markdown
table of the medians.  For evox
that includes the ``sample``/``add`` calls to the strategy's container (Docker), with strategy
switches disabled (they are LLM-bound); for adaevolve the archives' crowding, the island
bookkeeping and the paradigm path (the instant model answers guide requests with the offline
model's paradigm responder).
The programs are prefilled through the population's ``add`` (for adaevolve: crowding into
island 0, whose archive keeps 20 of them; the store holds them all).

    python bench/loop_overhead.py [--iterations 200] [--sizes 1000 10000] [--scaffolds NAME ...]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.core.config import GeneralConfig  # noqa: E402
from harness.core.controller import Controller  # noqa: E402
from harness.core.evaluator import BaseEvaluator  # noqa: E402
from harness.core.records import EvalResult, LLMCall, Program, Prompt  # noqa: E402
from harness.core.registry import BuildEnv, build_scaffold, list_scaffolds, load_config  # noqa: E402
from harness.core.store import IterationCommit, RunRecord  # noqa: E402
from harness.llm.offline.paradigm_responder import paradigm_responder  # noqa: E402
from harness.llm.offline.responders import OfflineRequest, ResponseContext  # noqa: E402
from harness.llm.usage import UsageMeter  # noqa: E402
from harness.sandbox.sessions import make_sessions  # noqa: E402
from harness.store.sqlite import SQLiteStore  # noqa: E402

FENCE = re.compile(r"```[a-z]*\n(.*?)```", re.S)
PARADIGMS = paradigm_responder()


class InstantModel:
    """Edits ``x = N`` in the prompt's last code block to ``x = N + 1 + seed % 7``."""

    def __init__(self) -> None:
        self.meter = UsageMeter()

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state: dict) -> None:
        pass

    async def generate(self, prompt: Prompt, *, purpose: str, seed: int) -> LLMCall:
        if purpose == "paradigm":  # an AdaEvolve guide request: the offline model's ideas
            messages = tuple((m["role"], m["content"]) for m in prompt.messages())
            request = OfflineRequest("instant", messages, seed)
            text = PARADIGMS.respond(request, ResponseContext(random.Random(seed)))
            return LLMCall(model="instant", text=text, prompt_tokens=1, completion_tokens=1)
        blocks = FENCE.findall(prompt.user)
        line = next((ln for ln in blocks[-1].splitlines() if ln.startswith("x = ")), None)
        if line is None:  # not a solution prompt (an EvoX strategy rewrite): decline
            return LLMCall(model="instant", text="no answer", prompt_tokens=1, completion_tokens=1)
        value = int(line.split("=")[1]) + 1 + seed % 7
        text = f"<<<<<<< SEARCH\n{line}\n=======\nx = {value}\n>>>>>>> REPLACE\n"
        call = LLMCall(model="instant", text=text, prompt_tokens=1, completion_tokens=1)
        self.meter.record(call)
        return call


class InstantEvaluator(BaseEvaluator):
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    async def evaluate(self, code: str, *, program_id: str, iteration: int) -> EvalResult:
        return EvalResult(status="ok", metrics={"combined_score": self.rng.random()})


def measure(name: str, size: int, iterations: int, workdir: Path) -> list[tuple[float, float]]:
    """Per iteration: (wall seconds, this process's CPU seconds)."""
    total = size + iterations
    flags: dict = {"general": {"max_iterations": total}}
    if name == "evox":
        # Strategy switches are LLM-bound: keep them out of the loop's own overhead.
        flags["memory"] = {"switch_interval": 10 * total}
    if name == "openevolve":
        # Hold every program (the card's cap of 1,000 would evict the 10k down to 1k).
        flags["population"] = {"population_size": total}
    spec, config = load_config(name, flags=flags)
    evaluator = InstantEvaluator(seed=size)
    sessions = make_sessions("docker") if name == "evox" else None
    env = BuildEnv(seed=0, evaluator=evaluator, run_id="bench", sessions=sessions)
    scaffold = build_scaffold(spec, config, env)
    store = SQLiteStore(workdir / f"{name}-{size}.sqlite")
    run = RunRecord(
        id="bench",
        scaffold=name,
        task="bench",
        task_path="",
        config={},
        seed=0,
        max_iterations=total,
    )
    store.create_run(run)
    rng = random.Random(1)
    prefill = []
    for i in range(size + 1):
        score = rng.random()
        program = Program(
            id=f"p{i}",
            code=f"# program {i}\nx = {i * 1000}\n",
            iteration=i,
            metrics={"combined_score": score},
            score=score,
            # openevolve: spread over its 5 islands (others keep their own placement).
            metadata={"island": i % 5} if name == "openevolve" else {},
        )
        scaffold.population.add(program)
        prefill.append(program)
    store.commit_iteration(IterationCommit("bench", size, "ok", programs=prefill))
    ctl = Controller(
        scaffold,
        store=store,
        run=run,
        model=InstantModel(),
        meter=UsageMeter(),
        general=GeneralConfig(max_iterations=total),
        seed_code=None,
    )
    ctl.all_programs = {p.id: p for p in prefill}
    ctl.best = max(prefill, key=lambda p: p.score)
    ctl._done = set(range(size + 1))  # noqa: SLF001 - the bench fakes a run's history
    times: list[tuple[float, float]] = []

    def tick(_progress: object) -> None:
        times.append((time.perf_counter(), time.process_time()))

    ctl.on_progress = tick

    async def run() -> None:
        try:
            await ctl.run_to_end()
        finally:
            await scaffold.aclose()

    start = (time.perf_counter(), time.process_time())
    asyncio.run(run())
    stamps = [start, *times]
    store.close()
    if sessions is not None:
        sessions.close()
    return [(b[0] - a[0], b[1] - a[1]) for a, b in zip(stamps, stamps[1:], strict=False)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--scaffolds", nargs="+", default=None)
    args = parser.parse_args()
    names = args.scaffolds or list_scaffolds()
    print(
        f"{'scaffold':<22}{'programs':>10}{'median ms':>11}{'p95 ms':>9}{'mean ms':>9}"
        f"{'median CPU ms':>15}"
    )
    table: dict[str, dict[int, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            for size in args.sizes:
                per_iter = measure(name, size, args.iterations, Path(tmp))
                ms = sorted(wall * 1000 for wall, _ in per_iter)
                cpu = statistics.median(c * 1000 for _, c in per_iter)
                p95 = ms[min(len(ms) - 1, int(0.95 * len(ms)))]
                print(
                    f"{name:<22}{size:>10}{statistics.median(ms):>11.2f}{p95:>9.2f}"
                    f"{statistics.fmean(ms):>9.2f}{cpu:>15.2f}",
                    flush=True,
                )
                table.setdefault(name, {})[size] = statistics.median(ms)
    print("\nmedian wall ms per iteration (markdown):\n")
    print("| programs | " + " | ".join(table) + " |")
    print("|---|" + "---|" * len(table))
    for size in args.sizes:
        cells = " | ".join(f"{table[name][size]:.2f}" for name in table)
        print(f"| {size:,} | {cells} |")


if __name__ == "__main__":
    main()
