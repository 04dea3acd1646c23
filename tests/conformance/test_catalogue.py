"""Every composition of the catalogue that ``check()`` accepts runs, under every loop option it
accepts (no Docker; the offline model in-process, a regex scorer, EvoX strategies in local
subprocesses).

Three iterations of two attempts each, with an evaluator that fails every third candidate and
a model whose every fourth proposal call is an LLM error, so resampling, retried LLM errors and
admitted failures all happen.  A composition or loop option ``check()`` refuses is refused
before any run (that is tested with the refusal's wording); one it accepts must not crash.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import yaml

from harness.core.config import SLOTS, Composition, LoopConfig
from harness.core.errors import ConfigError
from harness.core.records import EvalResult
from harness.core.registry import block_catalog, load_config
from tests.conformance.runner import build, run
from tests.evox.fakes import OfflineChat, RegexEvaluator

#: Each loop option on its own (the defaults are all off).
LOOPS = ["default", *LoopConfig.model_fields]


def compositions() -> list[dict[str, str]]:
    catalog = block_catalog()
    names = [sorted(catalog[slot]) for slot in SLOTS]
    return [dict(zip(SLOTS, chosen, strict=True)) for chosen in itertools.product(*names)]


def _accepted(blocks: dict[str, str], loop: LoopConfig | None = None) -> bool:
    from harness.core.blocks import check

    try:
        check(Composition(**blocks), block_catalog(), loop)
    except ConfigError:
        return False
    return True


def _loop(option: str) -> LoopConfig:
    return LoopConfig() if option == "default" else LoopConfig(**{option: True})


ACCEPTED = [blocks for blocks in compositions() if _accepted(blocks)]
CASES = [
    pytest.param(blocks, option, id="-".join([*blocks.values(), option]))
    for blocks in ACCEPTED
    for option in LOOPS
    if _accepted(blocks, _loop(option))
]


class FlakyEvaluator(RegexEvaluator):
    """The regex score, but every third candidate is judged invalid."""

    def __init__(self) -> None:
        self.calls = 0

    async def evaluate(self, code: str, *, program_id: str, iteration: int) -> EvalResult:
        self.calls += 1
        if iteration > 0 and self.calls % 3 == 0:
            return EvalResult(status="invalid", metrics={"validity": 0.0, "combined_score": 0.0})
        return await super().evaluate(code, program_id=program_id, iteration=iteration)


def _settings(blocks: dict[str, str]) -> list[str]:
    settings = ["general.inner_retry_times=2"]
    if blocks["memory"] == "strategy_history":  # one strategy rewrite, a short Valid(·)
        settings += [
            "memory.switch_interval=1",
            "memory.validation.stress_programs=50",
            "memory.validation.stress_every=10",
        ]
    return settings


def test_the_catalogue_is_crossed_whole() -> None:
    """Every block takes part in some accepted composition, and some are refused."""
    catalog = block_catalog()
    used = {(slot, blocks[slot]) for blocks in ACCEPTED for slot in SLOTS}
    assert used == {(slot, name) for slot in SLOTS for name in catalog[slot]}
    assert 0 < len(ACCEPTED) < len(compositions())


@pytest.mark.slow  # about 40 s for the 600 runs; EvoX's resampling is in tests/evox too
@pytest.mark.parametrize(("blocks", "option"), CASES)
def test_every_accepted_composition_runs_under_every_accepted_loop(
    blocks: dict[str, str], option: str, tmp_path: Path
) -> None:
    composition = tmp_path / "composition.yaml"
    loop = {} if option == "default" else {option: True}
    composition.write_text(yaml.safe_dump({"name": "mix", "blocks": blocks, "loop": loop}))
    chat = OfflineChat(seed=0, fail=lambda purpose, n: purpose == "propose" and n % 4 == 2)
    built = build(
        str(composition),
        tmp_path / "s.sqlite",
        iterations=3,
        overrides=_settings(blocks),
        evaluator=FlakyEvaluator(),
        model=chat,
    )
    run(built)
    record = built.store.get_run("conf")
    assert record.status in ("completed", "interrupted"), record.error
    assert record.stop_reason in ("completed", "no_proposal"), record.error
    assert [p.iteration for p in built.store.programs("conf")][0] == 0


def _every_loop() -> list[LoopConfig]:
    options = list(LoopConfig.model_fields)
    return [
        LoopConfig(**dict(zip(options, values, strict=True)))
        for values in itertools.product((False, True), repeat=len(options))
    ]


def test_a_refused_loop_is_refused_before_the_run_with_the_reason(tmp_path: Path) -> None:
    """Some block refuses some loop (any combination of options); ``load_config`` says which
    block, which options and why, in one line, before anything is built."""
    refused = [
        (blocks, loop)
        for blocks in ACCEPTED
        for loop in _every_loop()
        if not _accepted(blocks, loop)
    ]
    assert refused, "no block refuses a loop: this test has nothing to show"
    blocks, loop = refused[0]
    composition = tmp_path / "composition.yaml"
    data = {"blocks": blocks, "loop": loop.model_dump()}
    composition.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError) as error:
        load_config(str(composition))
    message = str(error.value)
    assert message.startswith("incompatible loop: ") and "\n" not in message
    on = [f"loop.{option}" for option, value in loop.model_dump().items() if value]
    assert any(option in message for option in on)
