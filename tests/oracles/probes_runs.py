"""Drivers that run a reference implementation end to end on a task folder (in the oracle
interpreter): SkyDiscover 0.1.0 (``run_discovery``) and OpenEvolve 0.4.0 (``OpenEvolve.run``),
against the endpoint the folder's config names.  They return what the reference admitted, for
the differential tests' error messages; the requests themselves are logged by the endpoint.

The references evaluate candidates in their own process (trusted test data only)."""

from __future__ import annotations

import asyncio
import logging
import os
import tempfile
from typing import Any


def skydiscover_run(folder: str, config: str, iterations: int, search: str) -> dict[str, Any]:
    """SkyDiscover 0.1.0 on ``folder`` with ``config`` (its ``search.type`` is ``search``)."""
    logging.disable(logging.CRITICAL)
    os.environ.setdefault("OPENAI_API_KEY", "none")
    from skydiscover.api import run_discovery

    with tempfile.TemporaryDirectory() as out:
        result = run_discovery(
            os.path.join(folder, "initial_program.py"),
            os.path.join(folder, "evaluator.py"),
            config=config,
            iterations=iterations,
            output_dir=out,
            cleanup=False,
            search=search,
        )
    return {"best_score": result.best_score}


def openevolve_run(folder: str, config: str, iterations: int) -> dict[str, Any]:
    """OpenEvolve 0.4.0 on ``folder`` with ``config``; the fitness after each admission.

    Its islands and archive are sets of uuid strings, so which member a seeded draw picks
    depends on hash order (arbitrary, and uuid4 differs run to run): they are made
    insertion-ordered, as in ``probes_openevolve``.  No decision of the reference changes."""
    logging.disable(logging.CRITICAL)
    os.environ.setdefault("OPENAI_API_KEY", "none")
    from openevolve import OpenEvolve
    from openevolve.config import load_config
    from openevolve.database import ProgramDatabase
    from openevolve.utils.metrics_utils import get_fitness_score
    from probes_openevolve import OrderedSet

    admitted: list[dict[str, Any]] = []
    original = ProgramDatabase.add
    init = ProgramDatabase.__init__

    def ordered_init(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        self.islands = [OrderedSet() for _ in self.islands]
        self.archive = OrderedSet()

    ProgramDatabase.__init__ = ordered_init  # type: ignore[method-assign]

    def add(self: Any, program: Any, iteration: Any = None, target_island: Any = None) -> Any:
        result = original(self, program, iteration=iteration, target_island=target_island)
        fitness = get_fitness_score(program.metrics, self.config.feature_dimensions)
        admitted.append({"iteration": iteration, "island": target_island, "fitness": fitness})
        return result

    ProgramDatabase.add = add  # type: ignore[method-assign]
    with tempfile.TemporaryDirectory() as out:
        engine = OpenEvolve(
            os.path.join(folder, "initial_program.py"),
            os.path.join(folder, "evaluator.py"),
            config=load_config(config),
            output_dir=out,
        )
        best = asyncio.run(engine.run(iterations=iterations))
    return {"admitted": admitted, "best": best.metrics if best is not None else None}


def head_adaevolve_runs(iterations: int, seed: int) -> dict[str, Any]:
    """SkyDiscover's repository (HEAD, first on ``sys.path``) running AdaEvolve on the
    differential fixture, each run against a fresh fake endpoint: once with Python's ``random``
    seeded before the run (HEAD seeds nothing itself), twice unseeded.  Returns the seeded
    run's requests and where the two unseeded runs part."""
    import random
    import shutil
    import tempfile

    import cases_runs
    from fake_endpoint import FakeEndpoint

    logging.disable(logging.CRITICAL)
    os.environ.setdefault("OPENAI_API_KEY", "none")
    from skydiscover.api import run_discovery

    case = cases_runs.CASES["adaevolve"]

    def one(seeded: bool) -> list[list[Any]]:
        with (
            FakeEndpoint(unmatched=case.unmatched) as endpoint,
            tempfile.TemporaryDirectory() as tmp,
        ):
            folder = os.path.join(tmp, "task")
            shutil.copytree(cases_runs.FIXTURE, folder)
            with open(os.path.join(folder, "config.yaml"), "w") as fh:
                fh.write(case.config(endpoint.url, iterations))
            if seeded:
                random.seed(seed)
            else:
                random.seed()
            run_discovery(
                evaluator=os.path.join(folder, "evaluator.py"),
                initial_program=os.path.join(folder, "initial_program.py"),
                config=os.path.join(folder, "config.yaml"),
                iterations=iterations,
                search="adaevolve",
                output_dir=os.path.join(tmp, "out"),
                cleanup=False,
            )
            return [[r.current, r.shown, r.kind] for r in endpoint.log]

    seeded = one(True)
    first, second = one(False), one(False)
    pairs = enumerate(zip(first, second, strict=False))
    parted = next((n for n, (a, b) in pairs if a[:2] != b[:2]), None)
    return {"requests": seeded, "unseeded_part_at": parted}
