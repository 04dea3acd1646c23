"""Red team for Valid(·): strategies that attack the judge's readings and bounds (issue 20).

Each hostile strategy runs through Valid(·) without the pre-filter (it imports what it needs to
lie: ``resource``, ``time``, ``threading``), in the local sandbox (a host subprocess, read from
``/proc/<pid>``) and in a real Docker sandbox (read from the container's cgroup).  The judge
must reach the true verdict from outside the strategy's process:

- a strategy rewriting the scores it was given (after breaking ``copy.deepcopy`` in its own
  process, the route that used to blind the in-process judge) is caught;
- a ~300 MiB memory bomb that fakes ``resource.getrusage`` and the clocks is rejected with its
  real peak;
- ~1.5 s of CPU per ``add`` (over the 1 s per-call limit, with every clock faked) is stopped on
  the very first ``add``, not after the stress run;
- 31 spinning threads are rejected;
- whatever a strategy does, validation ends within the configured overall deadline, and says so.
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from scaffolds.evox.factory import ContainerLimits, StrategyFactory
from strategy_tests import ValidationReport
from tests.evox.conftest import TEST_VALID, valid
from tests.evox.strategies import module

MIB = 1 << 20

#: Lies a hostile strategy tells about itself, in its own process (none of them may matter).
LIES = """
import copy
import resource
import time

_REAL_PROCESS_TIME = time.process_time
for _clock in ("time", "monotonic", "perf_counter", "process_time", "thread_time"):
    setattr(time, _clock, lambda: 0.0)
resource.getrusage = lambda who: resource.struct_rusage((0.0, 0.0, 1024) + (0,) * 13)
copy.deepcopy = lambda value, memo=None: value
copy.copy = lambda value: value
"""

#: Rewrites every score it is given (and every score it holds) to 1.0.
SCORE_TAMPERING = module(
    imports=LIES,
    add="program.metrics['combined_score'] = 1.0\n"
    "for _p in self.programs.values():\n    _p.metrics['combined_score'] = 1.0",
)
#: Honest at add(); rewrites the scores it holds when asked to sample.
SCORE_TAMPERING_LATER = module(
    imports=LIES,
    sample="for _p in pool:\n    _p.metrics['combined_score'] = 1.0",
)
#: What the memory bomb allocates, in MiB.
BOMB_MIB = 300
#: How far above ``BOMB_MIB`` the sandbox's high-water mark may be: the interpreter and the
#: strategy harness under the bomb (measured 17 MiB in Docker, 34 MiB as a host subprocess).
BASELINE_MIB = 64
#: Holds ~300 MiB from its first add() on, while claiming 1 MiB.
MEMORY_BOMB = module(
    imports=LIES,
    init="self._ballast = None",
    add=f"if self._ballast is None:\n    self._ballast = b'x' * ({BOMB_MIB} << 20)",
)
#: Spends ~1.5 s of CPU in every add() (measured with the real clock it kept).
SLOW_ADD = module(
    imports=LIES,
    add="_end = _REAL_PROCESS_TIME() + 1.5\nwhile _REAL_PROCESS_TIME() < _end:\n    pass",
)
#: Starts 31 threads that spin forever.
THREAD_BOMB = module(
    imports=LIES + "import threading\n\ndef _spin():\n    while True:\n        pass\n",
    init="for _ in range(31):\n    threading.Thread(target=_spin, daemon=True).start()",
)
#: Every call sleeps (no CPU): each call is within its limits, the whole never ends.
SLOW_EVERYTHING = module(
    imports="import time",
    add="time.sleep(0.5)",
    sample="time.sleep(0.5)",
)
#: One call that never returns.
HANGS = module(imports="import time", add="time.sleep(3600)")
#: Never finishes importing.
HANGS_AT_IMPORT = module(imports="import time\ntime.sleep(3600)")


@pytest.fixture(params=["local", pytest.param("docker", marks=pytest.mark.docker)])
def factory(request: pytest.FixtureRequest) -> StrategyFactory:
    if request.param == "local":
        return request.getfixturevalue("local_factory")
    request.getfixturevalue("no_leaked_containers")
    return request.getfixturevalue("docker_factory")


def failed_at(report: ValidationReport) -> tuple[str, str | None]:
    """(the first check that failed, the bound it names as its cause)."""
    first = next(c for c in report.checks if c.status == "fail")
    return first.name, first.cause


@pytest.mark.parametrize("source", [SCORE_TAMPERING, SCORE_TAMPERING_LATER], ids=["add", "sample"])
async def test_rewriting_the_scores_it_was_given_is_detected(
    source: str, factory: StrategyFactory
) -> None:
    report = await valid(source, factory)
    failed = report.failure
    assert failed is not None, report.to_dict()
    assert "metric 'combined_score'" in failed.detail and "changed from" in failed.detail
    assert "to 1.0" in failed.detail
    assert not report.passed


async def test_a_memory_bomb_is_rejected_with_its_real_peak(factory: StrategyFactory) -> None:
    report = await valid(MEMORY_BOMB, factory)
    failed = report.failure
    assert failed is not None and failed.name == "memory", report.to_dict()
    assert failed_at(report) == ("single_add", "memory")  # its first add()
    peak = report.resources["peak_memory_mb"]
    # Read from outside (cgroup or /proc): the bomb plus the interpreter, not the 1 MiB it claims.
    assert BOMB_MIB <= peak <= BOMB_MIB + BASELINE_MIB, report.resources
    stated = re.search(r"peaked at (\d+) MiB", failed.detail)
    assert stated is not None, failed.detail
    # The same reading: whole MiB in the detail, tenths in the resources.
    assert abs(int(stated[1]) - peak) <= 0.55, (failed.detail, peak)


@pytest.mark.slow
async def test_a_slow_add_is_stopped_on_its_first_call(factory: StrategyFactory) -> None:
    report = await valid(SLOW_ADD, factory)
    failed = report.failure
    assert failed is not None and failed.name == "call_time", report.to_dict()
    assert failed_at(report) == ("single_add", "call_time")  # the very first add()
    assert failed.detail.startswith("add() used ") and "and was stopped" in failed.detail
    used = float(failed.detail.removeprefix("add() used ").split(" s ", 1)[0])
    assert used >= TEST_VALID.max_call_s  # over it, as the detail rounds it (to 0.01 s)
    # load, __init__ and the one add(): judged long before any stress run.
    assert report.resources["calls"] <= 3, report.resources


async def test_a_thread_bomb_is_rejected(factory: StrategyFactory) -> None:
    report = await valid(THREAD_BOMB, factory)
    failed = report.failure
    assert failed is not None and failed.name == "threads", report.to_dict()
    assert failed_at(report)[0] in ("construct", "threads")
    assert report.resources["peak_tasks"] > TEST_VALID.max_tasks, report.resources
    assert "threads and processes" in failed.detail
    if factory.kind == "docker":  # the container's own bounds, as the kernel enforces them
        box = report.resources["sandbox"]
        assert box["pids"] == TEST_VALID.limits.pids and box["cpus"] == TEST_VALID.limits.cpus
        assert report.resources["readings"] in ("cgroup v1", "cgroup v2", "engine stats")
    else:
        assert report.resources["readings"] == "/proc"


@pytest.mark.slow
@pytest.mark.parametrize(
    "source", [SLOW_EVERYTHING, HANGS, HANGS_AT_IMPORT], ids=["slow_calls", "hang", "import"]
)
async def test_validation_ends_within_its_overall_deadline(
    source: str, factory: StrategyFactory
) -> None:
    config = replace(
        TEST_VALID,
        deadline_s=12.0,
        limits=ContainerLimits(memory_mb=512, call_s=30.0, bulk_s=60.0),
    )
    report = await valid(source, factory, config)
    assert not report.passed
    failed = report.failure
    assert failed is not None, report.to_dict()
    assert "ran out of its overall deadline of 12 s" in failed.detail, report.to_dict()
    # The bound the suite promises (sandbox start and removal included), not a speed figure.
    assert report.elapsed_s <= config.deadline_s, report.elapsed_s
