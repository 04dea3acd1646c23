"""The reference's Valid(·) checks (SkyDiscover §2.6.3), in its order, with its ids and sizes.

``load`` and ``structure`` happen when the module is loaded into the server; ``construct``
makes ``EvolvedProgramDatabase("test_db", DatabaseConfig())``.  One deliberate difference: the
plain answer form ``(program, [programs])`` is accepted (the database contract allows it; the
reference's validator insists on the dict form).
"""

from __future__ import annotations

from harness.core.errors import StrategyError
from strategy_tests.context import ValidRun
from strategy_tests.fixtures import ERROR_METRICS, IMMUTABILITY_METRICS, record
from strategy_tests.report import CheckFailed

__all__ = ["REFERENCE_CHECKS"]

MAIN = "test_db"


async def construct(run: ValidRun) -> str:
    await run.new(MAIN, config="base")
    return "EvolvedProgramDatabase('test_db', DatabaseConfig()) constructed"


async def single_add(run: ValidRun) -> str:
    await run.add(MAIN, [record("test_program_1", {"score": 0.5, "combined_score": 0.5}, 0)])
    return "add() returned the id; get() finds it; metrics unchanged"


async def bulk_add_sample(run: ValidRun) -> str:
    for i in range(10):
        await run.add(
            MAIN, [record(f"program_{i}", {"score": i / 10, "combined_score": i / 10}, i)]
        )
    count = await run.count(MAIN)
    if count < 10:
        raise CheckFailed(f"expected at least 10 programs in self.programs, found {count}")
    for i in range(10):
        await run.reference_sample(MAIN, 4, f"sample {i + 1} of 10 (num_context_programs=4)")
    return "10 adds, 10 samples well-formed"


async def error_metrics(run: ValidRun) -> str:
    await run.add(MAIN, [record("error_program", ERROR_METRICS, 10)])
    for i in range(5):
        await run.reference_sample(MAIN, 3, f"sample {i + 1} of 5 with an error-string metric")
    return "a program with string metrics is stored and sampled"


async def metric_immutability(run: ValidRun) -> str:
    await run.add(MAIN, [record("metrics_test_program", IMMUTABILITY_METRICS, 11)])
    return "stored and original metrics unchanged"


async def migration(run: ValidRun) -> str:
    handle = "migration_test_db"
    await run.new(handle, config="base")
    records = [
        record(f"migrated_program_{i}", {"combined_score": i / 5, "score": i / 5}, i)
        for i in range(5)
    ]
    await run.add(handle, records, base=True)
    count = await run.count(handle)
    if count < 5:
        raise CheckFailed(
            f"expected at least 5 programs after adding base Program instances, found {count}"
        )
    for i in range(3):
        try:
            await run.reference_sample(handle, 3, f"migration sample {i + 1} of 3")
        except StrategyError as exc:
            if "No candidates to sample" in str(exc):
                raise CheckFailed(
                    f"{exc} — migrated programs are instances of the base Program class; do "
                    "not filter with isinstance(p, EvolvedProgram), use self.programs.values()"
                ) from exc
            raise
    return "5 base Program instances added and sampled"


async def context_contract(run: ValidRun) -> str:
    await run.reference_sample(MAIN, 3, "num_context_programs=3 contract")
    return "context never exceeds num_context_programs"


REFERENCE_CHECKS = (
    ("construct", construct),
    ("single_add", single_add),
    ("bulk_add_sample", bulk_add_sample),
    ("error_metrics", error_metrics),
    ("metric_immutability", metric_immutability),
    ("migration", migration),
    ("context_contract", context_contract),
)
