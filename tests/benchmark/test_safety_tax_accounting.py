"""``bench/safety_tax.py``'s split of a run's wall into evaluation and everything around it."""

from __future__ import annotations

from pathlib import Path

from bench.safety_tax import _eval_seconds, _peer_eval_s

# The lines OpenEvolve 0.4.0 and SkyDiscover 0.1.0 write for one program's evaluation (copied
# from their logs on this machine), with the lines around them that must not count.
OPENEVOLVE_LOG = """\
2026-11-27 06:42:01,037 - openevolve.controller - INFO - Adding initial program to database
2026-11-27 06:42:01,157 - openevolve.evaluator - INFO - Evaluated program 67bcd410-282b in 0.12s: validity=1.0000, combined_score=0.3642
2026-11-27 06:42:01,396 - openevolve.evaluator - INFO - Evaluated program 6cdc3277-7881 in 0.10s: validity=0.0000, error=Invalid shapes
2026-11-27 06:42:01,401 - openevolve.process_parallel - INFO - Iteration 1: Program 6cdc3277 (parent: 67bcd410) completed in 0.17s
"""  # noqa: E501
SKYDISCOVER_LOG = """\
2026-11-27 06:48:03,009 - root - INFO - Evaluating program 01d406d4
2026-11-27 06:48:03,220 - skydiscover.evaluation.evaluator - INFO - Evaluated program 01d406d4-1beb in 0.21s: validity=1.0000, eval_time=0.1038
"""  # noqa: E501


def test_a_peers_evaluation_time_is_summed_from_its_logs(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "openevolve_1.log").write_text(OPENEVOLVE_LOG)
    assert abs(_peer_eval_s(tmp_path) - 0.22) < 1e-9  # not the iteration's "completed in"
    (tmp_path / "logs" / "topk_1.log").write_text(SKYDISCOVER_LOG)
    assert abs(_peer_eval_s(tmp_path) - 0.43) < 1e-9


def test_a_peer_without_a_log_has_no_evaluation_time(tmp_path: Path) -> None:
    assert _peer_eval_s(tmp_path) is None


def test_galapagos_evaluation_time_is_its_stages_time() -> None:
    two = {"duration_s": 0.3, "stages": [{"duration_s": 0.1}, {"duration_s": 0.15}]}
    assert abs(_eval_seconds(two) - 0.25) < 1e-9
    assert _eval_seconds({"duration_s": 0.2, "stages": []}) == 0.2  # no stage record: the whole
    assert _eval_seconds({"status": "failed"}) == 0.0


def test_the_same_work_wall_drops_the_stages_beyond_one_per_evaluation() -> None:
    from bench.safety_tax import same_work_wall

    # 40 stages for 31 evaluations, 0.8 s in evaluation: 9 stages at 20 ms each come off.
    run = {"wall_s": 2.5, "stages": 40, "evaluations": 31, "eval_s": 0.8}
    assert abs(same_work_wall(run) - (2.5 - 9 * 0.02)) < 1e-9
    assert same_work_wall({**run, "stages": 31}) == 2.5
    assert same_work_wall({**run, "eval_s": None}) == 2.5
