"""``EvalResult.to_dict`` (stored with every evaluation) writes what ``dataclasses.asdict``
wrote, and reads back equal."""

from __future__ import annotations

import dataclasses
import json

from harness.core.records import EvalResult


def test_eval_result_to_dict_is_the_asdict_json() -> None:
    result = EvalResult(
        "ok",
        metrics={"combined_score": 0.5, "v": [1, (2, 3)], "d": {"a": 1}},
        artifacts={"x": "y"},
        duration_s=1.5,
        exit_code=0,
        failed_stage=None,
        stages=({"stage": "s", "passed": True},),
        infra_retries=("engine restarted",),
    )
    before = dataclasses.asdict(result)
    before["stages"] = [dict(s) for s in result.stages]
    before["infra_retries"] = list(result.infra_retries)
    assert json.dumps(result.to_dict()) == json.dumps(before)
    back = EvalResult.from_dict(json.loads(json.dumps(result.to_dict())))
    assert back.to_dict() == json.loads(json.dumps(result.to_dict()))
