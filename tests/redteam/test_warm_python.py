"""The warm interpreter of compat boxes, attacked and compared (``docs/sandbox.md``, "A warm
interpreter for the evaluator's subprocess").

A compat evaluator that runs ``[sys.executable, program, arg]`` gets, in its box, an
interpreter forked before the job instead of a fresh one.  These tests run an OpenEvolve-style
folder (``fixtures/warm_folder``: the first call is taken over, a second plain call and a
``-c`` call are not) and check that the taken-over program sees what a fresh interpreter shows
(the second call is the reference, in the same box), holds nothing of the evaluator or the task
(no module, no descriptor, no path), that nothing it leaves (files, a daemon, a changed
preloaded module) reaches the next candidate in the same container, that numpy's unseeded draws
differ from candidate to candidate, and that a program the evaluator kills on its timeout is
gone and the container serves the next one.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.evaluation.driver import TaskEvaluator
from harness.evaluation.task import Task, load_task
from tests.redteam.test_reuse import _in_turn, _stdout
from tests.redteam.test_reuse import backend as backend  # one container at a time

pytestmark = pytest.mark.docker

FOLDER = Path(__file__).parent / "fixtures" / "warm_folder"

FACTS = r"""
import json, os, resource, signal, sys
with open("/proc/thread-self/status") as f:
    status = dict(line.split(":", 1) for line in f.read().splitlines())
with open("/proc/self/oom_score_adj") as f:
    oom = f.read().strip()
facts = {
    # What a child inherits from the evaluator's process besides files, environment, directory.
    "inherited": {
        key: status[key].strip()
        for key in ("Umask", "Uid", "Gid", "Groups", "CapEff", "CapBnd", "NoNewPrivs",
                    "Seccomp", "SigBlk", "SigIgn", "Cpus_allowed_list")
    },
    "limits": [resource.getrlimit(getattr(resource, name)) for name in sorted(dir(resource))
               if name.startswith("RLIMIT_")],
    "priority": os.getpriority(os.PRIO_PROCESS, 0),
    "oom": oom,
    "signals": {int(s): str(signal.getsignal(s)) for s in signal.valid_signals()  # not default
                if s not in (signal.SIGKILL, signal.SIGSTOP)
                and signal.getsignal(s) is not signal.SIG_DFL},
    "preloaded": "numpy" in sys.modules,
    "name": __name__,
    "argv": sys.argv,
    "file": __file__,
    "cwd": os.getcwd(),
    "path": sys.path,
    "probe": os.environ.get("GLPG_PROBE"),
    "env_keys": sorted(os.environ),
    "fds": sorted(int(f) for f in os.listdir("/proc/self/fd")),
    "evaluator_loaded": "evaluator" in sys.modules,
    "uid": os.getuid(),
    "executable": sys.executable,
    "stdout_buffered": not sys.stdout.line_buffering,
}
import numpy as np
facts["draw"] = float(np.random.rand())
print("FACTS " + json.dumps(facts))
"""

RAISES = r"""
import sys
def deep():
    raise ValueError("boom from the program")
if sys.argv[1] in ("first", "second"):
    deep()
"""

PLANTER = r"""
import os, sys, time
import numpy
if sys.argv[1] == "first":
    numpy.glpg_planted = "yes"
    os.environ["GLPG_PLANTED"] = "yes"
    for where in ("/tmp/glpg_planted", "/dev/shm/glpg_planted", "glpg_planted"):
        with open(where, "w") as f:
            f.write("x")
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            for fd in (0, 1, 2):  # or the evaluator waits for its pipes to close
                os.close(fd)
            time.sleep(120)
        os._exit(0)
    print("PLANTED")
"""

FINDER = r"""
import os, sys
preloaded = "numpy" in sys.modules
import numpy

def parent(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(dict(line.split(":", 1) for line in f)["PPid"])

found = []
if getattr(numpy, "glpg_planted", None):
    found.append("numpy attribute")
if os.environ.get("GLPG_PLANTED"):
    found.append("environment")
for where in ("/tmp/glpg_planted", "/dev/shm/glpg_planted", "glpg_planted"):
    if os.path.exists(where):
        found.append(where)
me = int(os.readlink("/proc/self"))
ours = {me, parent(me), parent(parent(me))}  # the program, the evaluator, the box's init
for entry in os.listdir("/proc"):
    if not entry.isdigit() or int(entry) in ours:
        continue
    try:
        with open(f"/proc/{entry}/status") as f:
            status = dict(line.split(":", 1) for line in f)
    except OSError:
        continue
    if status["Uid"].split()[0] == str(os.getuid()):
        found.append(f"process {entry} {status['Name'].strip()}")
print("FOUND", found, "PRELOADED", preloaded)
"""

SLEEPER = r"""
import sys, time
if sys.argv[1] == "first":
    print("sleeping", flush=True)
    time.sleep(120)
print("awake")
"""


@pytest.fixture(scope="module")
def folder_task() -> Task:
    return load_task(FOLDER)


@pytest.fixture
def evaluator(folder_task: Task, backend: object) -> TaskEvaluator:
    return TaskEvaluator(folder_task, backend, run_id="warm", close_backend=False)


def _facts(text: str) -> list[dict[str, object]]:
    return [
        json.loads(line[len("FACTS ") :]) for line in text.splitlines() if line.startswith("FACTS ")
    ]


async def test_the_program_sees_what_a_fresh_interpreter_shows(evaluator: TaskEvaluator) -> None:
    (result,) = await _in_turn(evaluator, FACTS)
    out = _stdout(result)
    assert result.status == "ok", (result.error, out)  # type: ignore[attr-defined]
    warm, fresh = _facts(out)
    # The first call ran in the warm interpreter (numpy already imported), the second afresh.
    assert warm["preloaded"] is True and fresh["preloaded"] is False, out
    assert "DASH_C rc=0 preloaded=False" in out, out
    # numpy's unseeded draws: the program's are not the evaluator's (both forked from one state).
    evaluator_draw = float(re.search(r"EVALUATOR_DRAW (\S+)", out).group(1))  # type: ignore[union-attr]
    assert warm["draw"] != evaluator_draw, out
    for key in ("draw", "preloaded", "argv"):
        warm.pop(key)
        fresh.pop(key)
    assert warm == fresh, (warm, fresh)
    assert warm["name"] == "__main__" and warm["probe"] == "passed"
    # Nothing of the evaluator: not its module, not one descriptor beyond stdio (the 3 is
    # listdir's own), not the compat shims' path.
    assert warm["evaluator_loaded"] is False
    assert warm["fds"] == [0, 1, 2, 3], warm["fds"]
    assert not any("compat" in p for p in warm["path"]), warm["path"]  # type: ignore[union-attr]


async def test_a_failing_program_fails_as_in_a_fresh_interpreter(evaluator: TaskEvaluator) -> None:
    (result,) = await _in_turn(evaluator, RAISES)
    out = _stdout(result)
    warm = re.search(r"FIRST rc=(\d+)\n.*?ERR<<(.*?)>>", out, re.S)
    fresh = re.search(r"SECOND rc=(\d+)\n.*?ERR2<<(.*?)>>", out, re.S)
    assert warm and fresh, out
    assert warm.group(1) == fresh.group(1) == "1", out
    assert warm.group(2) == fresh.group(2), out
    assert "ValueError: boom from the program" in warm.group(2)
    assert "galapagos_sandbox" not in warm.group(2) and "Traceback" in warm.group(2)


async def test_what_a_program_leaves_never_reaches_the_next_candidate(
    evaluator: TaskEvaluator,
) -> None:
    planted, found = await _in_turn(evaluator, PLANTER, FINDER)
    assert "PLANTED" in _stdout(planted), _stdout(planted)
    out = _stdout(found)
    # The finder's first run is the warm interpreter; it and the fresh second run find nothing
    # the planter's own warm run left (files, environment, a preloaded module changed, its
    # detached daemon).
    assert "FIRST rc=0\nFOUND [] PRELOADED True" in out, out
    assert "SECOND rc=0\nFOUND [] PRELOADED False" in out, out


async def test_unseeded_numpy_draws_differ_between_candidates(evaluator: TaskEvaluator) -> None:
    one, two = await _in_turn(evaluator, FACTS, FACTS)
    draws = [_facts(_stdout(r))[0]["draw"] for r in (one, two)]
    assert draws[0] != draws[1], draws


async def test_a_program_killed_on_the_evaluators_timeout_is_gone(
    evaluator: TaskEvaluator,
) -> None:
    slept, after = await _in_turn(evaluator, SLEEPER, FACTS)
    out = _stdout(slept)
    assert "FIRST rc=TIMEOUT" in out and "SECOND rc=0\nawake" in out, out
    assert slept.status == "ok", slept.error  # type: ignore[attr-defined]
    assert _facts(_stdout(after))[0]["preloaded"] is True, _stdout(after)
