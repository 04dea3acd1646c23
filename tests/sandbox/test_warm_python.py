"""The warm interpreter (``galapagos_sandbox.warm``) against a real one, on this host.

Each probe program runs twice through ``subprocess.run([sys.executable, script, …])`` in a
process that imported numpy, once with the warm interpreter started and once without; what
the caller sees (exit status, stdout, stderr) must be the same, byte for byte.  A probe also
checks that the warm run really was warm (numpy already imported), so a fallback to a real
interpreter cannot pass for the fast path.  The boxed, in-container side is attacked in
``tests/redteam/test_warm_python.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness.sandbox import _runtime

DRIVER = textwrap.dedent(
    """
    import json, os, subprocess, sys, time
    import numpy  # the zygote's preload
    warm = os.environ.pop("GLPG_WARM", "") == "1"
    warm_pid = None
    if warm:
        from galapagos_sandbox import warm as w
        w.start()
        warm_pid = w._state["pid"]
    kwargs = json.loads(sys.argv[1])
    exec(kwargs.pop("prelude", ""))  # what the evaluator does before its call
    args = [sys.executable, *kwargs.pop("args")]
    text = kwargs.pop("stdin_text", None)
    if kwargs.pop("chdir_first", None):
        os.chdir(kwargs.pop("cwd"))
    threads = kwargs.pop("threads", 1)

    def call():
        p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, **kwargs)
        out, err = p.communicate(text.encode() if text else None, timeout=30)
        return [p.returncode, out.decode("utf-8", "replace"),
                err.decode("utf-8", "replace"), p.pid == warm_pid]

    if threads == 1:
        print(json.dumps(call()))
    else:
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(threads) as pool:
            print(json.dumps([f.result() for f in [pool.submit(call) for _ in range(threads)]]))
    """
)

PROBES = {
    "exit code": "import sys\nprint('out')\nsys.exit(3)\n",
    "exit message": "import sys\nsys.exit('leaving now')\n",
    "exit none": "raise SystemExit\n",
    "exit 256": "import sys\nsys.exit(256)\n",
    "raises": "def f():\n    raise KeyError('k')\nprint('before')\nf()\n",
    "syntax error": "x = (\n",
    "name and argv": "import sys, os\nprint(__name__, sys.argv, __file__, os.getcwd())\n",
    "path": "import sys\nprint(sys.path[0])\n",
    "stdin": "import sys\nprint(sys.stdin.read().upper())\n",
    "unicode": "print('π ≈ 3.14159 — ünïcödé')\n",
    "stderr and stdout": (
        "import sys\nprint('a')\nsys.stderr.write('b\\n')\nprint('c', file=sys.stderr)\n"
    ),
    "atexit": "import atexit\natexit.register(lambda: print('bye'))\nprint('hi')\n",
    "thread joins at exit": (
        "import threading, time\n"
        "def late():\n    time.sleep(0.2)\n    print('thread done', flush=True)\n"
        "threading.Thread(target=late).start()\nprint('main done')\n"
    ),
    "os._exit loses buffered output": "import os\nprint('lost')\nos._exit(5)\n",
    "pickle a class of __main__": (
        "import pickle\nclass P:\n    pass\nprint(type(pickle.loads(pickle.dumps(P()))).__name__)\n"
    ),
    "dataclass": (
        "from dataclasses import dataclass\n@dataclass\nclass D:\n    x: int\nprint(D(1))\n"
    ),
    "environment": "import os\nprint(os.environ.get('GLPG_GIVEN'), 'GLPG_WARM' in os.environ)\n",
    "nested interpreter": (
        "import subprocess, sys\n"
        "print(subprocess.run([sys.executable, '-c', 'print(40 + 2)'],"
        " capture_output=True, text=True).stdout)\n"
    ),
    "future annotations are the program's own": (
        "class C:\n    x: int\nprint(C.__annotations__)\n"
    ),
    "objects of __main__ freed at exit": (
        "class D:\n    def __del__(self):\n        print('freed')\nd = D()\nprint('end')\n"
    ),
    "chdir before the call": "import os\nprint(os.getcwd())\n",
    "numpy works": "import numpy as np\nprint(np.arange(4).sum(), np.linalg.norm([3, 4]))\n",
    "process state": (
        "import os, resource, signal\n"
        "with open('/proc/thread-self/status') as f:\n"
        "    status = dict(line.split(':', 1) for line in f.read().splitlines())\n"
        "print({k: status[k].strip() for k in ('Umask', 'SigBlk', 'SigIgn', 'CapEff',"
        " 'NoNewPrivs', 'Seccomp', 'Cpus_allowed_list')})\n"
        "print([resource.getrlimit(getattr(resource, n)) for n in sorted(dir(resource))"
        " if n.startswith('RLIMIT_')], os.getpriority(os.PRIO_PROCESS, 0))\n"
        "print({int(s): str(signal.getsignal(s)) for s in signal.valid_signals()"
        " if s not in (signal.SIGKILL, signal.SIGSTOP)})\n"
    ),
}

#: The exit status of each probe that does not end well (every other one exits 0): a probe
#: that crashed the same way in both interpreters must not pass for one that ran.
STATUS = {
    "exit code": 3,
    "exit message": 1,
    "raises": 1,
    "syntax error": 1,
    "os._exit loses buffered output": 5,
}

WARM_CHECK = "import sys\nprint('numpy' in sys.modules)\n"


def _run(tmp_path: Path, source: str | None, *, warm: bool, **kwargs: object) -> list[object]:
    """``[status, stdout, stderr, whether the warm interpreter ran it]``."""
    script = tmp_path / "probe.py"
    if source is not None:
        script.write_text(source)
    env = {
        **os.environ,
        "PYTHONPATH": str(_runtime.RUNTIME_DIR),
        "GLPG_WARM": "1" if warm else "0",
    }
    call = {"args": [str(script), "one", "two"], "cwd": str(tmp_path), **kwargs}
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, json.dumps(call)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_warm_run_is_warm_and_a_plain_run_is_not(tmp_path: Path) -> None:
    assert _run(tmp_path, WARM_CHECK, warm=True) == [0, "True\n", "", True]
    assert _run(tmp_path, WARM_CHECK, warm=False) == [0, "False\n", "", False]


@pytest.mark.parametrize("probe", sorted(PROBES))
def test_a_program_behaves_as_in_a_fresh_interpreter(tmp_path: Path, probe: str) -> None:
    extra: dict[str, object] = {}
    if probe == "stdin":
        extra["stdin_text"] = "shout"
    if probe == "chdir before the call":
        extra["chdir_first"] = True
    if probe == "environment":
        extra["env"] = {**os.environ, "PYTHONPATH": str(_runtime.RUNTIME_DIR),
                        "GLPG_GIVEN": "given"}  # fmt: skip
    *warm, taken = _run(tmp_path, PROBES[probe], warm=True, **extra)
    *fresh, plain = _run(tmp_path, PROBES[probe], warm=False, **extra)
    assert (taken, plain) == (True, False)
    assert warm[0] == STATUS.get(probe, 0), warm
    assert warm == fresh


@pytest.mark.parametrize(
    ("why", "args", "extra"),
    [
        ("a flag before the script", ["-u", "probe.py"], {}),
        ("-c", ["-c", "import sys; print('numpy' in sys.modules)"], {}),
        ("another interpreter setting", ["probe.py"], {"env": {"PYTHONHASHSEED": "7"}}),
        ("a new session", ["probe.py"], {"start_new_session": True}),
        ("a missing script", ["missing.py"], {}),
        ("a changed umask", ["probe.py"], {"prelude": "os.umask(0o027)"}),
        (
            "a lowered resource limit",
            ["probe.py"],
            {"prelude": "import resource; resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))"},
        ),
        (
            "an ignored signal",
            ["probe.py"],
            {"prelude": "import signal; signal.signal(signal.SIGTERM, signal.SIG_IGN)"},
        ),
        (
            "a blocked signal",
            ["probe.py"],
            {"prelude": "import signal as s; s.pthread_sigmask(s.SIG_BLOCK, {s.SIGUSR1})"},
        ),
        ("a lower priority", ["probe.py"], {"prelude": "os.nice(1)"}),
        ("a narrower CPU set", ["probe.py"], {"prelude": "os.sched_setaffinity(0, {0})"}),
        (
            "a raised OOM score",
            ["probe.py"],
            {"prelude": "open('/proc/self/oom_score_adj', 'w').write('500')"},
        ),
        (
            "a process state it cannot read",
            ["probe.py"],
            {"prelude": "os.getpriority = lambda *a: 1 / 0"},
        ),
        (
            "a no-new-privileges bit",
            ["probe.py"],
            {"prelude": "import ctypes; ctypes.CDLL(None).prctl(38, 1, 0, 0, 0)"},
        ),
    ],
)
def test_what_it_cannot_reproduce_exactly_runs_a_real_interpreter(
    tmp_path: Path, why: str, args: list[str], extra: dict[str, object]
) -> None:
    (tmp_path / "probe.py").write_text(WARM_CHECK)
    if "env" in extra:
        extra = {"env": {**os.environ, "PYTHONPATH": str(_runtime.RUNTIME_DIR),
                         **extra["env"]}}  # type: ignore[dict-item]  # fmt: skip
    status, out, _err, taken = _run(tmp_path, None, warm=True, args=args, **extra)
    assert taken is False, why
    if why != "a missing script":
        assert (status, out) == (0, "False\n"), why
    else:
        assert status == 2


def test_calls_from_several_threads_at_once_each_get_their_own_run(tmp_path: Path) -> None:
    source = "import sys, time\ntime.sleep(0.2)\nprint(sys.argv[1:])\n"
    runs = _run(tmp_path, source, warm=True, threads=4)
    assert [run[:3] for run in runs] == [[0, "['one', 'two']\n", ""]] * 4, runs
    assert sum(bool(run[3]) for run in runs) <= 1, runs


FOLDER = Path(__file__).parents[1] / "redteam" / "fixtures" / "warm_folder"


@pytest.mark.parametrize(
    ("overrides", "warm"), [([], True), (["evaluator.warm_python=false"], False)]
)
async def test_a_runs_config_turns_the_warm_interpreter_off(
    overrides: list[str], warm: bool, tmp_path: Path
) -> None:
    """``evaluator.warm_python`` reaches the job: the seed of an OpenEvolve-style folder whose
    evaluator runs it as ``[sys.executable, program]`` finds numpy imported, or not."""
    import sqlite3

    from harness.runs import execute, plan_run
    from harness.store.sqlite import SQLiteStore

    plan = plan_run(
        scaffold="best_of_n", task=str(FOLDER), iterations=0, sandbox="local", overrides=overrides
    )
    store = SQLiteStore(tmp_path / "s.sqlite")
    summary = await execute(plan, store)
    assert summary.status == "completed"
    with sqlite3.connect(tmp_path / "s.sqlite") as db:
        (row,) = db.execute("SELECT result FROM evaluations").fetchall()
    out = json.loads(row[0])["artifacts"]["stdout_tail"]
    assert f"FIRST rc=0\nnumpy preloaded: {warm}\n" in out, out
    assert "SECOND rc=0\nnumpy preloaded: False\n" in out, out
