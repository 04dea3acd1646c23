"""EvoX's guide model: problem-specific operator texts once per run, and the insight every
strategy rewrite is conditioned on — through the real LLM client and the offline server."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.core.config import GeneralConfig
from harness.core.controller import Controller
from harness.core.errors import LLMError
from harness.core.records import LLMCall, Prompt, TaskInfo
from harness.core.registry import BuildEnv, build_scaffold, load_config
from harness.core.rng import make_rng
from harness.core.store import RunRecord
from harness.llm.client import LLMClient
from harness.llm.config import OFFLINE_MODEL, ModelConfig, ResolvedLLM
from harness.llm.offline import OfflineServer, start_offline_server
from harness.llm.usage import UsageMeter
from harness.sandbox.sessions import LocalSessions
from harness.store.sqlite import SQLiteStore
from scaffolds.evox.guide import (
    INSIGHT_MARKER,
    OPERATORS_MARKER,
    OUTCOMES_MARKER,
    SUMMARY_MARKER,
    parse_operators,
)
from tests.evox.fakes import SEED_PROGRAM, RegexEvaluator
from tests.evox.strategies import module

RUN = "guide"
SWITCH_EVERY_2 = ["memory.switch_interval=2", "memory.improvement_threshold=100"]


@pytest.fixture
def server() -> Iterator[OfflineServer]:
    srv = start_offline_server(seed=0)
    yield srv
    srv.close()


class FailingGuide(LLMClient):
    """The real client whose guide calls fail (an endpoint that rejects the guide model)."""

    async def generate(
        self, prompt: Prompt, *, purpose: str = "propose", seed: int | None = None
    ) -> LLMCall:
        if purpose == "guide":
            raise LLMError("guide model 'gm' at the endpoint: not found (HTTP 404)")
        return await super().generate(prompt, purpose=purpose, seed=seed)


class LabellingStrategies(LLMClient):
    """The real client; strategy rewrites are answered with a module that labels every parent
    (DIVERGE and REFINE in turn), so solution prompts carry the operator texts."""

    async def generate(
        self, prompt: Prompt, *, purpose: str = "propose", seed: int | None = None
    ) -> LLMCall:
        if purpose == "strategy":
            code = module(label="self.DIVERGE_LABEL if self._n % 2 else self.REFINE_LABEL")
            return LLMCall(model="fixed", text=f"```python\n{code}\n```", purpose=purpose)
        return await super().generate(prompt, purpose=purpose, seed=seed)


def build(
    store_path: Path,
    server: OfflineServer,
    *,
    iterations: int = 8,
    overrides: list[str] | None = None,
    client_class: type[LLMClient] = LLMClient,
    create: bool = True,
) -> tuple[Controller, Any, SQLiteStore, LLMClient]:
    spec, config = load_config(
        "evox",
        overrides=[
            f"general.max_iterations={iterations}",
            "memory.validation.stress_programs=50",
            *(overrides or []),
        ],
    )
    env = BuildEnv(
        seed=config.seed,
        evaluator=RegexEvaluator(),
        task=TaskInfo(
            name="toy",
            description="Make the number after `score =` as large as possible.",
            model_context="Make the number after `score =` as large as possible.\n"
            "How candidates are evaluated: the last `score = x` line, capped at 2.",
        ),
        run_id=RUN,
        sessions=LocalSessions(),
    )
    scaffold = build_scaffold(spec, config, env)
    store = SQLiteStore(store_path)
    run = RunRecord(RUN, "evox", "toy", "", config.model_dump(mode="json"), 0, iterations)
    if create:
        store.create_run(run)
    meter = UsageMeter()
    settings = ResolvedLLM(
        provider="openai",
        models=(ModelConfig(name=OFFLINE_MODEL),),
        api_base=server.base_url,
        api_key="offline",
    )
    client = client_class(settings, rng=make_rng(0, "llm.ensemble"), meter=meter)
    ctl = Controller(
        scaffold,
        store=store,
        run=store.get_run(RUN),
        model=client,
        meter=meter,
        general=GeneralConfig(**config.general.model_dump()),
        seed_code=SEED_PROGRAM,
    )
    return ctl, scaffold, store, client


def drive(ctl: Controller, scaffold: Any, client: LLMClient) -> Any:
    async def go() -> Any:
        try:
            return await ctl.run_to_end()
        finally:
            await scaffold.aclose()
            await client.aclose()

    return asyncio.run(go())


def calls(store: SQLiteStore, purpose: str) -> list[dict[str, Any]]:
    return [c for c in store.llm_exchanges(RUN) if c["purpose"] == purpose]


def test_operator_answers_are_parsed_or_refused() -> None:
    good = "intro\n## DIVERGE\n- use a lattice\n## REFINE\n- tune the step\n"
    assert parse_operators(good) == ("- use a lattice", "- tune the step")
    assert parse_operators("## DIVERGE\n- only one section\n") is None
    assert parse_operators("## DIVERGE\n\n## REFINE\n- empty diverge\n") is None
    assert parse_operators("## DIVERGE\n" + "x" * 2000 + "\n## REFINE\n- y\n") is None


def test_operators_are_generated_once_stored_and_used_in_solution_prompts(
    tmp_path: Path, server: OfflineServer
) -> None:
    ctl, scaffold, store, client = build(
        tmp_path / "s.sqlite", server, overrides=SWITCH_EVERY_2, client_class=LabellingStrategies
    )
    summary = drive(ctl, scaffold, client)
    assert summary.status == "completed"
    guide = calls(store, "guide")
    operator_calls = [c for c in guide if OPERATORS_MARKER in c["prompt"]]
    assert len(operator_calls) == 1 and operator_calls[0]["iteration"] == 0
    (event,) = store.events(RUN, ["variation_operators"])
    assert event.payload["source"] == "generated"
    assert "Ideas for this problem:" in event.payload["diverge"]
    assert "Ideas for this problem:" in event.payload["refine"]
    # The texts are the run's labels, and labelled parents show them in the solution prompt.
    labels = scaffold.selection.chain.labels
    assert (labels.diverge, labels.refine) == (event.payload["diverge"], event.payload["refine"])
    with_label = [p for p in store.programs(RUN) if p.parent_label]
    assert len(with_label) >= 3
    assert {p.parent_label for p in with_label} == {labels.diverge, labels.refine}
    prompts = {c["iteration"]: c["prompt"] for c in calls(store, "propose")}
    for program in with_label:
        assert program.parent_label in prompts[program.iteration]


def test_the_rewrite_prompt_carries_the_three_insight_parts(
    tmp_path: Path, server: OfflineServer
) -> None:
    ctl, scaffold, store, client = build(tmp_path / "s.sqlite", server, overrides=SWITCH_EVERY_2)
    drive(ctl, scaffold, client)
    guide = calls(store, "guide")
    assert [c for c in guide if INSIGHT_MARKER in c["prompt"]]
    assert len([c for c in guide if SUMMARY_MARKER in c["prompt"]]) == 1  # cached afterwards
    assert [c for c in guide if OUTCOMES_MARKER in c["prompt"]]
    rewrites = [c["prompt"] for c in calls(store, "strategy")]
    assert rewrites
    full = [
        p
        for p in rewrites
        if "## Problem summary (guide model)" in p
        and "## Population insight (guide model" in p
        and "While active:" in p  # the offline guide's outcome text for an earlier strategy
    ]
    assert full, rewrites[-1][:3000]
    insight = store.events(RUN, ["strategy_insight"])
    assert insight and all(not e.payload["errors"] for e in insight)


def test_failed_guide_calls_fall_back_and_never_fail_the_run(
    tmp_path: Path, server: OfflineServer
) -> None:
    ctl, scaffold, store, client = build(
        tmp_path / "s.sqlite", server, overrides=SWITCH_EVERY_2, client_class=FailingGuide
    )
    summary = drive(ctl, scaffold, client)
    assert summary.status == "completed" and summary.iterations_done == 8
    (event,) = store.events(RUN, ["variation_operators"])
    assert event.payload["source"] == "default" and "guide LLM failed" in event.payload["error"]
    assert "Ideas for this problem:" not in event.payload["diverge"]
    assert event.payload["diverge"].startswith("## IMPORTANT")  # the generic texts
    insight = store.events(RUN, ["strategy_insight"])
    assert insight and all(e.payload["errors"] for e in insight)
    rewrites = [c["prompt"] for c in calls(store, "strategy")]
    assert rewrites and all("## Population insight (guide model" not in p for p in rewrites)
    assert all("population_size" in p or "programs" in p for p in rewrites)  # the numbers
    assert not store.events(RUN, ["hook_skipped"])


@pytest.mark.slow
def test_operators_are_reused_after_a_resume(tmp_path: Path, server: OfflineServer) -> None:
    path = tmp_path / "s.sqlite"
    ctl, scaffold, store, client = build(path, server, iterations=8)

    def stop(progress: Any) -> None:
        if progress.iterations_done >= 3:
            ctl.request_stop()

    ctl.on_progress = stop
    drive(ctl, scaffold, client)
    (before,) = store.events(RUN, ["variation_operators"])
    ctl2, scaffold2, store2, client2 = build(path, server, iterations=8, create=False)
    ctl2.restore()
    assert drive(ctl2, scaffold2, client2).status == "completed"
    assert len(store2.events(RUN, ["variation_operators"])) == 1
    operator_calls = [c for c in calls(store2, "guide") if OPERATORS_MARKER in c["prompt"]]
    assert len(operator_calls) == 1
    assert scaffold2.selection.chain.labels.diverge == before.payload["diverge"]
