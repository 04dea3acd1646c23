"""Drivers that run *inside* a reference interpreter, never in ours: the oracle venv for the live
tests (SkyDiscover 0.1.0), or the recorder with a snapshot of SkyDiscover's repository first on
``sys.path`` (HEAD, for golden traces).  Standard library plus the reference's own modules.

The two references name and shape ``sample()`` differently (0.1.0: ``num_inspirations``, a dict
per side; HEAD: ``num_context_programs``, plain values for the greedy databases); ``_sample``
hides that, so one driver serves both.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import random
import sys
from pathlib import Path
from typing import Any


def _sample(db: Any, k: int) -> tuple[Any, list[Any]]:
    params = inspect.signature(db.sample).parameters
    name = "num_context_programs" if "num_context_programs" in params else "num_inspirations"
    parent, context = db.sample(**{name: k})
    if isinstance(parent, dict):
        parent = next(iter(parent.values()))
    if isinstance(context, dict):
        context = [p for programs in context.values() for p in programs]
    return parent, list(context)


def _config(**fields: Any) -> Any:
    from skydiscover.config import DatabaseConfig

    config = DatabaseConfig()
    if hasattr(config, "random_seed"):
        config.random_seed = None  # 0.1.0 would seed the global random at construction
    for key, value in fields.items():
        setattr(config, key, value)  # the reference reads unknown database keys by getattr
    return config


def drive_policies(scripts: list[dict[str, Any]]) -> list[list[list[Any]]]:
    """Per script, per step: ``[parent id, [context ids]]`` from the reference's
    ``TopKDatabase`` / ``BestOfNDatabase`` (see ``tests/oracles/cases.py`` for a script).

    ``attempts`` is Galapagos' Best-of-N variant: the same database with its counter advanced
    once per sample (failed iterations included) instead of once per admitted child.
    """
    from skydiscover.search.base_database import Program
    from skydiscover.search.best_of_n.database import BestOfNDatabase
    from skydiscover.search.topk.database import TopKDatabase

    out = []
    for script in scripts:
        if script["kind"] == "topk":
            db: Any = TopKDatabase("t", _config())
        else:
            db = BestOfNDatabase("b", _config(best_of_n=script["n"]))
        db.add(Program(id="p0", solution="s", metrics=script["seed"], iteration_found=0), 0)
        random.seed(script["rng"])
        steps = []
        for i, metrics in enumerate(script["steps"], 1):
            parent, context = _sample(db, script["k"])
            steps.append([parent.id, [p.id for p in context]])
            if script["kind"] == "attempts":
                db.parent_iteration_count += 1  # the variant: one use per sample
            if metrics is None:
                continue
            child = Program(
                id=f"p{i}", solution="c", metrics=metrics, iteration_found=i, parent_id=parent.id
            )
            if script["kind"] == "attempts":
                kept, db.current_parent_id = db.current_parent_id, None
                db.add(child, iteration=i)  # add() must not count for the variant
                db.current_parent_id = kept
            else:
                db.add(child, iteration=i)
        out.append(steps)
    return out


def seed_strategy_draws(seed: int, ks: list[int]) -> list[list[Any]]:
    """The EvoX seed strategy over nine programs: ``[parent id, [context ids]]`` per ``k``."""
    from skydiscover.search.base_database import Program
    from skydiscover.search.evox.database.initial_search_strategy import (
        EvolvedProgramDatabase,
    )

    db = EvolvedProgramDatabase("evox", _config())
    for i in range(9):
        db.add(Program(id=f"p{i}", solution="", metrics={"combined_score": i / 10}), iteration=i)
    # Seeded after construction: the reference's base class draws from ``random`` while it is
    # built; ours does not, so our strategy server's seeding at load is equivalent.
    random.seed(seed)
    out = []
    for k in ks:
        parent, context = _sample(db, k)
        out.append([parent.id, [p.id for p in context]])
    return out


#: Each Valid(·) check of the reference validator and the catch-all message that ends its block.
_CHECK_ENDS = (
    ("load", "Failed to load database class"),
    ("structure", "Failed structural checks"),
    ("construct", "Failed to initialize database"),
    ("single_add", "Failed to add or verify program"),
    ("bulk_add_sample", "Failed to add 10 programs and sample"),
    ("error_metrics", "Failed to handle programs with error strings"),
    ("metric_immutability", "Failed to verify metrics immutability"),
    ("migration", "Migration test failed"),
    ("context_contract", "Unexpected error"),
)


def which_check(paths: dict[str, str]) -> dict[str, list[Any]]:
    """Per strategy file: ``[validity, name of the failing check or None]`` from the reference's
    validator.  Its ``_error_response`` is wrapped to note the line it was called from; the
    failing check is the block that line falls in."""
    import skydiscover.search.evox.database.search_strategy_evaluator as m

    source = Path(m.__file__).read_text().splitlines()
    ends = [
        (next(i for i, line in enumerate(source, 1) if text in line), name)
        for name, text in _CHECK_ENDS
    ]
    seen: list[int] = []
    original = m._error_response

    def noting(message: str) -> Any:
        seen.append(sys._getframe(1).f_lineno)
        return original(message)

    m._error_response = noting
    out = {}
    try:
        for name, path in paths.items():
            seen.clear()
            result = m.evaluate(path)
            check = None
            if result["validity"] == 0 and seen:
                check = next((n for end, n in ends if seen[0] <= end), "context_contract")
            out[name] = [result["validity"], check]
    finally:
        m._error_response = original
    return out


def get_scores(cases: list[dict[str, Any]]) -> list[float]:
    """The reference's score of each metrics dict (HEAD ``get_score``, 0.1.0
    ``get_fitness_score``)."""
    if importlib.util.find_spec("skydiscover.utils.metrics") is not None:
        from skydiscover.utils.metrics import get_score
    else:
        from skydiscover.utils.metrics_utils import get_fitness_score as get_score
    return [get_score(metrics) for metrics in cases]


def failure_verdicts(cases: list[dict[str, Any]]) -> list[bool]:
    """The default controller's failure predicate on each ``{metrics, artifacts}`` case.

    The predicate is an inline ``if`` in an async method, so it is read from the controller's
    source (HEAD ``default_discovery_controller.py``, 0.1.0 ``default_discovery_manager.py``)
    and evaluated as the expression it is, with ``child_metrics`` / ``child_artifacts`` bound.
    """
    spec = importlib.util.find_spec("skydiscover.search.default_discovery_controller")
    if spec is None:
        spec = importlib.util.find_spec("skydiscover.search.default_discovery_manager")
    assert spec is not None and spec.origin is not None, "no default controller found"
    text = Path(spec.origin).read_text()
    tests = [
        node.test
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.If)
        and 'child_metrics.get("validity") in (0, -1)'
        in (ast.get_source_segment(text, node.test) or "")
    ]
    assert len(tests) == 1, f"expected one failure predicate in {spec.origin}, found {len(tests)}"
    predicate = compile(ast.Expression(tests[0]), spec.origin, "eval")
    return [
        bool(eval(predicate, {"child_metrics": c["metrics"], "child_artifacts": c["artifacts"]}))
        for c in cases
    ]


class _Id:
    """What ``str(uuid.uuid4())`` returns in the driven database: our copy ids."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text


def drive_adaevolve(scripts: list[dict[str, Any]]) -> list[list[Any]]:
    """Per script, per iteration: the samples (island, mode, parent, context ids) and, after
    ``end_iteration``, the next island, the island count and each island's members.

    The database is the reference's ``AdaEvolveDatabase`` with paradigms off; copies it makes
    (seed copies, spawn seeds, migrants) get our ids (``p<iteration>.<n>``) through a patched
    ``uuid.uuid4``; the seed copies are made as the controller's ``_ensure_all_islands_seeded``.
    """
    from skydiscover.search.adaevolve import database as ada
    from skydiscover.search.base_database import Program

    counter = {"it": 0, "n": 0}

    def next_id() -> _Id:
        counter["n"] += 1
        return _Id(f"p{counter['it']}.{counter['n']}")

    ada.uuid.uuid4 = next_id  # type: ignore[assignment]
    config_cls = getattr(ada, "AdaEvolveDatabaseConfig", None)
    if config_cls is None:
        from skydiscover.config import AdaEvolveDatabaseConfig as config_cls
    out = []
    for script in scripts:
        config = config_cls()
        config.random_seed = None
        config.db_path = None
        for key in (
            "num_islands",
            "population_size",
            "migration_interval",
            "migration_count",
            "use_dynamic_islands",
            "spawn_productivity_threshold",
            "spawn_cooldown_iterations",
            "use_ucb_selection",
        ):
            setattr(config, key, script[key])
        config.use_paradigm_breakthrough = False
        db = ada.AdaEvolveDatabase("adaevolve", config)
        metrics = {"combined_score": script["seed_score"]}
        seed = Program(id="p0", solution=script["seed_code"], metrics=metrics, iteration_found=0)
        db.add(seed, iteration=0)
        counter.update(it=0, n=0)
        for island in range(1, db.num_islands):
            copy = Program(
                id=str(next_id()),
                solution=seed.solution,
                metrics=dict(metrics),
                iteration_found=0,
                metadata={"seeded_to_island": island},
            )
            db.add(copy, iteration=0, target_island=island)
        random.seed(script["rng"])
        steps = []
        for i, step in enumerate(script["steps"], 1):
            samples = []
            parent = None
            for _ in range(step["samples"]):
                island = db.current_island
                parent, context = _sample(db, 4)
                samples.append([island, db._last_sampling_mode, parent.id, [p.id for p in context]])
            if step["code"] is not None:
                child = Program(
                    id=f"p{i}",
                    solution=step["code"],
                    metrics={"combined_score": step["score"]},
                    iteration_found=i,
                    parent_id=parent.id,
                )
                db.add(child, iteration=i, parent_id=parent.id)
            counter.update(it=i, n=0)
            db.end_iteration(i)
            members = [[p.id for p in archive.get_all()] for archive in db.archives]
            steps.append([samples, db.current_island, db.num_islands, members])
        out.append(steps)
    return out


def drive_adaevolve_controller(scripts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """HEAD's ``AdaEvolveController`` loop on scripted runs (see
    ``cases.adaevolve_controller_scripts``): its own ``run_discovery``, ``_run_iteration``,
    ``_run_normal_step``, ``_generate_child`` and ``_execute_generation``, with the LLM, the
    evaluator, the guide model and the prompt builder replaced by scripted doubles that record
    what they are given.

    Per iteration: the guide request made at its start (best program, tried ideas, answered or
    not), each attempt (island, mode, parent, context, paradigm idea, sibling count, whether the
    previous error was passed on), and after ``end_iteration`` the next island, the island count
    and each island's members.  Copies get our ids (``p<iteration>.<n>``), children ``p<it>``.
    """
    import asyncio
    import types
    import uuid

    from cases import paradigm_ideas
    from skydiscover.search.adaevolve import controller as actl
    from skydiscover.search.adaevolve import database as ada
    from skydiscover.search.base_database import Program

    state: dict[str, Any] = {"it": 0, "n": 0, "child": False, "attempt": 0}

    def next_id() -> _Id:
        if state["child"]:
            return _Id(f"p{state['it']}")
        state["n"] += 1
        return _Id(f"p{state['copy_it']}.{state['n']}")

    uuid.uuid4 = next_id  # type: ignore[assignment]

    def one(script: dict[str, Any]) -> dict[str, Any]:
        config = ada.AdaEvolveDatabaseConfig() if hasattr(ada, "AdaEvolveDatabaseConfig") else None
        if config is None:
            from skydiscover.config import AdaEvolveDatabaseConfig

            config = AdaEvolveDatabaseConfig()
        config.random_seed = None
        config.db_path = None
        for key in (
            "num_islands",
            "population_size",
            "migration_interval",
            "migration_count",
            "use_dynamic_islands",
            "spawn_productivity_threshold",
            "spawn_cooldown_iterations",
            "paradigm_window_size",
            "paradigm_improvement_threshold",
        ):
            setattr(config, key, script[key])
        db = ada.AdaEvolveDatabase("adaevolve", config)
        metrics_of = {
            a["code"].strip(): a["metrics"]
            for attempts in script["iterations"]
            for a in attempts
            if isinstance(a, dict)
        }
        iterations: list[dict[str, Any]] = []
        guide = {"k": 0, "ok": 0}

        class Generator:
            async def generate(
                self,
                current_program_solution: str,
                current_best_score: float,
                previously_tried_ideas: list[str],
                evaluator_feedback: Any = None,
            ) -> list[dict[str, str]]:
                ok = script["guide"][guide["k"] % len(script["guide"])]
                guide["k"] += 1
                best = db.get_best_program()
                iterations[-1]["guide"] = {
                    "best": best.id if best else None,
                    "tried": list(previously_tried_ideas),
                    "ok": ok,
                }
                if not ok:
                    return []
                guide["ok"] += 1
                return paradigm_ideas(guide["ok"])

        class Builder:
            def build_prompt(
                self, parent_dict: dict[str, Any], context: dict[str, Any]
            ) -> dict[str, str]:
                parent = next(iter(parent_dict.values()))
                paradigm = context.get("paradigm")
                iterations[-1]["attempts"].append(
                    [
                        db.current_island,
                        db._last_sampling_mode,
                        parent.id,
                        [p.id for ps in context["other_context_programs"].values() for p in ps],
                        paradigm["idea"] if paradigm else None,
                        len(context.get("siblings") or []),
                        context.get("error_context") is not None,
                    ]
                )
                return {"system": "", "user": ""}

        class Evaluator:
            async def evaluate_program(self, code: str, program_id: str) -> Any:
                metrics = dict(metrics_of[code.strip()])
                return types.SimpleNamespace(metrics=metrics, artifacts={})

        ctl = object.__new__(actl.AdaEvolveController)
        ctl.database = db
        ctl.config = types.SimpleNamespace(
            language="python", diff_based_generation=False, checkpoint_interval=10**9
        )
        ctl.shutdown_event = asyncio.Event()
        ctl.enable_retry, ctl.max_retries, ctl.num_context_programs = True, 2, 4
        ctl.paradigm_generator = Generator()
        ctl.context_builder = Builder()
        ctl.evaluator = Evaluator()
        ctl.feedback_reader = None
        ctl.monitor_callback = None
        ctl._prompt_context = {}
        ctl._iteration_stats_log_path = None
        ctl._last_sampling_mode = None
        ctl._last_sampling_intensity = None
        ctl._setup_iteration_stats_logging = lambda *a, **k: None
        ctl._log_iteration_stats = lambda *a, **k: None

        async def call_llm(system: str, user: str, **kwargs: Any) -> Any:
            planned = script["iterations"][state["it"] - 1][state["attempt"]]
            state["attempt"] += 1
            if planned == "llm_error":
                raise RuntimeError("scripted LLM failure")
            return types.SimpleNamespace(text=f"```python\n{planned['code']}```", image_path=None)

        ctl._call_llm = call_llm

        async def execute(*args: Any, **kwargs: Any) -> Any:
            state["child"] = True
            try:
                return await actl.AdaEvolveController._execute_generation(ctl, *args, **kwargs)
            finally:
                state["child"] = False

        ctl._execute_generation = execute

        async def run_iteration(iteration: int, callback: Any) -> None:
            state.update(it=iteration, attempt=0)
            iterations.append({"guide": None, "attempts": []})
            await actl.AdaEvolveController._run_iteration(ctl, iteration, callback)

        ctl._run_iteration = run_iteration
        end_iteration = db.end_iteration

        def end(iteration: int) -> None:
            state.update(copy_it=iteration, n=0)
            end_iteration(iteration)
            iterations[-1]["after"] = [
                db.current_island,
                db.num_islands,
                [[p.id for p in archive.get_all()] for archive in db.archives],
            ]

        db.end_iteration = end
        db.log_prompt = lambda *a, **k: None
        db.log_status = lambda *a, **k: None
        seed_metrics = {"combined_score": script["seed_score"], "validity": 1}
        db.add(Program(id="p0", solution=script["seed_code"], metrics=seed_metrics), iteration=0)
        state.update(copy_it=0, n=0)
        random.seed(script["rng"])
        asyncio.run(ctl.run_discovery(1, len(script["iterations"])))
        return {"iterations": iterations}

    return [one(script) for script in scripts]
