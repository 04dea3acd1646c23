"""An EvoX run on a real task, wired as ``galapagos run`` wires it, with the strategy responder.

Everything is real: the task's evaluator in Docker, strategies in Docker, the LLM client
over HTTP against the offline model server.  The one difference from ``harness.runs.execute``:
the offline server is started here with strategy fault injection (``--faults``: the rates of
hostile strategies, a test seam no run config has) and reached as an OpenAI-compatible
endpoint.

    python -m tests.evox.e2e --task circle_packing --iterations 60 [--faults …] [--seed 0]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from harness.core.config import GeneralConfig
from harness.core.controller import Controller, RunSummary
from harness.core.records import TaskInfo
from harness.core.registry import BuildEnv, build_scaffold, load_config
from harness.core.rng import make_rng
from harness.core.store import RunRecord
from harness.evaluation.driver import TaskEvaluator
from harness.evaluation.task import load_task
from harness.evaluation.visible import model_view
from harness.llm.client import open_llm
from harness.llm.config import OFFLINE_MODEL, ModelConfig, ResolvedLLM
from harness.llm.offline.guide_responder import guide_responder
from harness.llm.offline.responders import diff_responder, rewrite_responder
from harness.llm.offline.server import start_offline_server
from harness.llm.offline.strategy_responder import strategy_responder
from harness.llm.usage import UsageMeter
from harness.runtime import Runtime
from harness.store.sqlite import SQLiteStore

FAULTS = "{crash_sample: 0.25, hang: 0.1, alloc: 0.1, fabricate: 0.1, network: 0.1}"


async def run_evox(
    store_path: Path,
    *,
    task: str,
    iterations: int,
    seed: int,
    faults: str,
    run_id: str,
    overrides: list[str] | None = None,
) -> tuple[RunSummary, SQLiteStore, Any]:
    spec, config = load_config(
        "evox",
        overrides=[
            f"general.max_iterations={iterations}",
            f"seed={seed}",
            *(overrides or []),
        ],
    )
    loaded = load_task(task)
    server = start_offline_server(
        seed=seed,
        responders=(
            guide_responder(),
            strategy_responder(faults=yaml.safe_load(faults) or {}),
            diff_responder(),
            rewrite_responder(),
        ),
    )
    meter = UsageMeter()
    settings = ResolvedLLM(
        provider="openai",
        models=(ModelConfig(name=OFFLINE_MODEL),),
        api_base=server.base_url,
        api_key="offline",
    )
    client = await open_llm(settings, rng=make_rng(seed, "llm.ensemble"), meter=meter)
    runtime = Runtime()  # every container of the run: evaluations and strategy sessions
    backend = await runtime.backend(config.evaluator, run_id)
    evaluator = TaskEvaluator(loaded, backend, run_id=run_id)
    env = BuildEnv(
        sessions=await runtime.sessions(config.evaluator, run_id),
        seed=seed,
        evaluator=evaluator,
        task=TaskInfo(
            name=loaded.name,
            description=loaded.prompt_description(),
            language=loaded.card.language,
            model_context=model_view(loaded),
        ),
    )
    scaffold = build_scaffold(spec, config, env)
    store = SQLiteStore(store_path)
    run = RunRecord(
        id=run_id,
        scaffold="evox",
        task=loaded.name,
        task_path=str(loaded.path),
        config=config.model_dump(mode="json"),
        seed=seed,
        max_iterations=iterations,
    )
    store.create_run(run)
    controller = Controller(
        scaffold,
        store=store,
        run=run,
        model=client,
        meter=meter,
        general=GeneralConfig(**config.general.model_dump()),
        seed_code=loaded.initial_program,
    )
    try:
        summary = await controller.run_to_end()
    finally:
        await scaffold.aclose()  # type: ignore[attr-defined]
        await evaluator.aclose()
        await runtime.aclose()
        await client.aclose()
        server.close()
    return summary, store, scaffold


def switch_log(store: SQLiteStore, run_id: str) -> list[str]:
    lines = []
    for e in store.events(run_id):
        p = e.payload
        if e.kind == "strategy_trigger":
            lines.append(
                f"it {e.iteration:>3} trigger   stagnant {p['interval']} steps, best "
                f"{p['best']:.4f}, active {p['active']}"
            )
        elif e.kind == "strategy_scored":
            lines.append(f"it {e.iteration:>3} scored    {p['strategy']}: J = {p['J']:.5f}")
        elif e.kind == "strategy_candidate":
            lines.append(
                f"it {e.iteration:>3} rejected  {p['candidate']} by {p['verdict']}"
                + (f" ({p['reason'][:70]!r})" if p.get("reason") else "")
            )
        elif e.kind == "strategy_validation" and not p["passed"]:
            lines.append(
                f"it {e.iteration:>3} rejected  {p['candidate']} by Valid(·) check "
                f"{p['failed_check']}: {p['detail'][:70]!r}"
            )
        elif e.kind == "strategy_switch":
            lines.append(
                f"it {e.iteration:>3} switch    -> {p['active']} (fallback {p['fallback']})"
            )
        elif e.kind == "strategy_failure":
            lines.append(
                f"it {e.iteration:>3} FAILURE   {p['strategy']} in {p['op']}: "
                f"{p['error_kind']} ({p['error'][:60]!r})"
            )
        elif e.kind in ("strategy_restore", "strategy_retry", "strategy_generation_failed"):
            lines.append(f"it {e.iteration:>3} {e.kind[9:]:<9} {p}")
    return lines


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--task", default="circle_packing")
    parser.add_argument("--iterations", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--faults", default=FAULTS)
    parser.add_argument("--store", type=Path, default=Path("/tmp/evox-e2e.sqlite"))
    args = parser.parse_args()
    args.store.unlink(missing_ok=True)
    started = time.monotonic()
    summary, store, _ = await run_evox(
        args.store,
        task=args.task,
        iterations=args.iterations,
        seed=args.seed,
        faults=args.faults,
        run_id="evox-e2e",
    )
    print(summary, f"{time.monotonic() - started:.0f} s")
    print("\n".join(switch_log(store, "evox-e2e")))
    kinds = Counter(e.kind for e in store.events("evox-e2e") if e.kind.startswith("strategy"))
    print(dict(kinds))


if __name__ == "__main__":
    asyncio.run(main())
