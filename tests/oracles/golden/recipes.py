"""Recipes for golden traces (see ../README.md): each one drives SkyDiscover's repository code
(the snapshot first on ``sys.path``) through the drivers in ``probes.py`` on the inputs of
``cases.py`` and returns plain data.  A recipe's docstring says why its trace is pinned; the
recorder stores it with the trace.

A trace keeps a hash of its inputs, not the inputs: the test regenerates them with the same
function and fails with a "regenerate" message when they changed.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import cases
import cases_runs
import probes
import probes_runs
from cases import digest


def policies() -> dict[str, Any]:
    """Top-K, Best-of-N and the attempts variant (counter advanced per sample), step by step,
    on scripts whose children may lack a usable ``combined_score`` and carry a bool metric.
    Pinned because there 0.1.0 counts the bool in the mean that ranks programs and HEAD, which
    we follow, does not; the other cases are compared live against 0.1.0."""
    out = {}
    for kind, seed in cases.GOLDEN_POLICY_SEEDS.items():
        scripts = cases.policy_scripts(
            kind, seed, count=cases.GOLDEN_POLICY_COUNT, bool_metrics=True
        )
        out[kind] = {"inputs": digest(scripts), "steps": probes.drive_policies(scripts)}
    return out


def scoring() -> dict[str, Any]:
    """``get_score`` and the default controller's failure predicate.  Pinned because HEAD
    differs from 0.1.0 in both: bools are left out of the mean, and an ``error`` in the
    artifacts (not only in the metrics) with ``combined_score == 0`` is a failure."""
    scores, failures = cases.score_cases(), cases.failure_cases()
    return {
        "scores": {"inputs": digest(scores), "results": probes.get_scores(scores)},
        "failures": {"inputs": digest(failures), "results": probes.failure_verdicts(failures)},
    }


def evox_valid() -> dict[str, Any]:
    """HEAD's Valid(·) verdict and failing check on each fixture as written (HEAD's
    ``num_context_programs``).  Pinned because 0.1.0's validator wants ``num_inspirations`` and
    bounds the bulk sample's context by min(5, n) where HEAD (and we) bound it by min(4, n)."""
    fixtures = cases.valid_fixtures()
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for name, source in fixtures.items():
            path = Path(tmp) / f"{name}.py"
            path.write_text(source)
            paths[name] = str(path)
        verdicts = probes.which_check(paths)
    return {
        name: {"source": digest(fixtures[name]), "validity": validity, "check": check}
        for name, (validity, check) in verdicts.items()
    }


def evox_seed_strategy() -> dict[str, Any]:
    """HEAD's EvoX seed strategy draws (``choice``, then ``sample(min(k+1, n))``).  Pinned
    because HEAD's seed strategy is the one our port follows; 0.1.0's (compared live) also
    reads ``config.random_seed``, which HEAD's config no longer has."""
    spec = cases.SEED_STRATEGY
    return {
        "inputs": digest(spec),
        "draws": {str(s): probes.seed_strategy_draws(s, spec["ks"]) for s in spec["seeds"]},
    }


def adaevolve_controller() -> dict[str, Any]:
    """HEAD's AdaEvolve controller loop on scripted runs: per iteration the paradigm request at
    its start (best program, tried ideas), every attempt's island, mode, parent, context,
    paradigm, sibling count and retry error, and the islands after ``end_iteration``.  Pinned
    because only the repository has this controller: 0.1.0's AdaEvolve manager admits failed
    evaluations instead of re-sampling and retrying."""
    scripts = cases.adaevolve_controller_scripts(
        cases.ADAEVOLVE_CONTROLLER_SEED, cases.ADAEVOLVE_CONTROLLER_COUNT
    )
    return {"inputs": digest(scripts), "runs": probes.drive_adaevolve_controller(scripts)}


def adaevolve_whole_run() -> dict[str, Any]:
    """HEAD's AdaEvolve on the differential fixture for twenty iterations, against the fake
    endpoint, with Python's ``random`` seeded once before the run (``random.seed(42)``): every
    request's current program, the programs it shows and the answer's kind.  Pinned because
    only the repository has this controller, and because HEAD seeds nothing itself: two
    unseeded runs part early (``unseeded_part_at``), so the seeded run is what can be pinned.
    The endpoint sends no diff whose SEARCH parts all miss: HEAD evaluates such a child (equal
    to its parent), the card's proposer rejects it (a documented difference)."""
    inputs = {
        "fixture": cases_runs.fixture_files(),
        "config": cases_runs.CASES["adaevolve"].template,
        "endpoint": cases_runs.endpoint_source(),
        "iterations": cases_runs.ITERATIONS,
        "seed": 42,
    }
    runs = probes_runs.head_adaevolve_runs(cases_runs.ITERATIONS, 42)
    return {"inputs": digest(inputs), **runs}


RECIPES = {
    "policies": policies,
    "scoring": scoring,
    "evox_valid": evox_valid,
    "evox_seed_strategy": evox_seed_strategy,
    "adaevolve_controller": adaevolve_controller,
    "adaevolve_whole_run": adaevolve_whole_run,
}
