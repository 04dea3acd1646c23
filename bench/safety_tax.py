"""The safety tax: Galapagos (every candidate sandboxed) against OpenEvolve and SkyDiscover.

Reproduces the table of issue 27 against the installed peers (OpenEvolve 0.4.0 and SkyDiscover
0.1.0 in ``.oracle-venv``; a peer that is missing is skipped) and prints every figure with its
ratio and goal.  All programs talk to one shared OpenAI-compatible fake endpoint (Galapagos'
offline model in a process of its own: a mutation operator, not an LLM).  Sections (``--only``):

``cpu``       machine CPU per evaluation of OpenEvolve's circle_packing example: sandboxed
              (warm pool, attributed from the kernel's counters) against the same cascade in a
              bare process that already imported numpy.  Goal ≤ 1.5×.
``e2e``       30 iterations on circle packing, whole-process wall time and peak memory (PSS of
              the process tree plus, for Galapagos, its containers and their shims): Galapagos
              best_of_n on OpenEvolve's folder, OpenEvolve on it, SkyDiscover topk on its own.
              Goals: wall ≤ 1.0× OpenEvolve's and ≤ 0.5× SkyDiscover's; memory ≤ 2× OpenEvolve's.
``loaded``    the same while an unrelated job saturates every core (one busy loop per core).
              Goal: Galapagos/OpenEvolve no worse than in ``e2e``.
``parallel``  speed-up of 4 parallel iterations over 1 with a 500 ms endpoint, for every scaffold
              that allows parallel iterations, on the same work (the median of ``--repeat``
              pairs; see :func:`section_parallel`).  Goal ≥ 3.6× (90 % efficiency).
``fast``      OpenEvolve's function_minimization (a fast evaluator), 30 iterations: Galapagos
              against OpenEvolve.  Goal ≤ 2×.
``cli``       ``galapagos --version`` and ``galapagos runs``.  Goal ≤ 0.3 s.

The peers' example folders are not in their wheels: pass their checkouts' folders
(``--openevolve-examples``, ``--skydiscover-benchmarks``; defaults ``$OPENEVOLVE_EXAMPLES``,
``$SKYDISCOVER_BENCHMARKS``, then ``/tmp/peers/oe/examples`` and
``/tmp/peers/sd/benchmarks``).  Usage::

    .venv/bin/python bench/safety_tax.py [--only cpu,e2e,...] [--repeat 3] [--json]

Wall-clock figures depend on what else the machine runs: the script prints the load it saw.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402

from bench._cpu import PeakMemory, SandboxCPU, background_rate, machine_busy_s  # noqa: E402
from bench._endpoint import shared_endpoint  # noqa: E402

MODEL = "galapagos-offline"
GALAPAGOS = ROOT / ".venv" / "bin" / "galapagos"
PARALLEL_SCAFFOLDS = ("topk", "best_of_n", "best_of_n_attempts", "openevolve")
SECTIONS = ("cpu", "e2e", "loaded", "parallel", "fast", "cli")


# -- helpers ---------------------------------------------------------------------------------


def first_dir(*candidates: str | Path | None) -> Path | None:
    for c in candidates:
        if c and Path(c).is_dir():
            return Path(c)
    return None


@contextmanager
def saturated() -> Iterator[None]:
    """One busy loop per core, at normal priority: an unrelated job using the whole machine."""
    procs = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(os.cpu_count() or 1)
    ]
    try:
        time.sleep(0.5)
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


def timed(cmd: list[str], env: dict[str, str], cwd: Path | None = None) -> dict[str, Any]:
    """Run ``cmd`` to its end; wall time and the peak PSS of its tree (and its containers)."""
    start = time.perf_counter()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.Popen(
        cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    with PeakMemory(proc.pid) as mem:
        out, err = proc.communicate()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    tree_cpu = (after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime)
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed ({proc.returncode}):\n{err[-3000:]}")
    containers = sum(1 for ours in mem.owned.values() if ours)
    return {
        "wall_s": wall, "peak_mb": mem.peak_mb, "containers": containers, "stdout": out,
        "stderr": err, "cpu_s": tree_cpu + mem.containers_cpu_s, "tree_cpu_s": tree_cpu,
        "containers_cpu_s": mem.containers_cpu_s,
    }  # fmt: skip


def env_for(api_base: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env.update(OPENAI_API_KEY="none", OPENAI_BASE_URL=api_base)
    return env


#: Galapagos' bytecode, compiled once by :func:`compile_galapagos`.  The peers run from wheels,
#: whose ``.pyc`` files pip wrote at install; Galapagos runs from this checkout (an editable
#: install), which has none where ``PYTHONDONTWRITEBYTECODE`` is set (as in some shells here):
#: without this every Galapagos process compiled ~140 modules (≈0.2–0.4 s) the peers never do.
PYCACHE = Path(tempfile.gettempdir()) / "galapagos-bench-pycache"


def galapagos_env(api_base: str) -> dict[str, str]:
    """``env_for`` with Galapagos' bytecode as an installed package has it."""
    env = env_for(api_base)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    return env


def compile_galapagos(root: Path = ROOT) -> None:
    """Compile the checkout's Python code into :data:`PYCACHE` (what ``pip install`` does)."""
    env = galapagos_env("")
    folders = [str(root / name) for name in ("harness", "scaffolds", "strategy_tests")]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *folders], env=env, check=True,
                   stdout=subprocess.DEVNULL)  # fmt: skip


# -- the three programs ------------------------------------------------------------------------


def galapagos_run(
    folder: Path, scaffold: str, iterations: int, seed: int, api_base: str, work: Path,
    extra: tuple[str, ...] = (),
) -> dict[str, Any]:  # fmt: skip
    store = work / f"g-{scaffold}-{time.monotonic_ns()}.sqlite"
    cmd = [
        str(GALAPAGOS), "run", "-s", scaffold, "-t", str(folder), "-i", str(iterations),
        "--seed", str(seed), "--api-base", api_base, "-m", MODEL, "--store", str(store),
        "--json", "--quiet", *extra,
    ]  # fmt: skip
    out = timed(cmd, galapagos_env(api_base), cwd=work)
    summary = json.loads(out["stdout"])
    out["run_s"] = float(summary["updated_at"]) - float(summary["created_at"])
    out["best"] = summary.get("best_score")
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT result FROM evaluations").fetchall()
    out["evaluations"] = len(rows)
    out["stages"] = sum(len(json.loads(row[0]).get("stages") or [None]) for row in rows)
    out["eval_s"] = sum(_eval_seconds(json.loads(row[0])) for row in rows)
    return out


def _eval_seconds(result: dict[str, Any]) -> float:
    """The time an evaluation's stages took, as measured where the evaluator ran (in the
    container: from the job's start to its answer)."""
    stages = result.get("stages") or []
    timed = [s.get("duration_s") for s in stages if isinstance(s.get("duration_s"), int | float)]
    if timed:
        return float(sum(timed))
    return float(result.get("duration_s") or 0.0)


#: A peer's log line for one program's evaluation (every cascade stage included):
#: ``Evaluated program <id> in 0.12s: …`` (OpenEvolve 0.4.0 and SkyDiscover 0.1.0 alike).
_PEER_EVALUATED = re.compile(r"Evaluated program \S+ in ([0-9.]+)s")


def _peer_eval_s(out_dir: Path) -> float | None:
    """The seconds a peer's evaluator spent, summed from its own log (None: no log)."""
    logs = list(out_dir.rglob("*.log"))
    if not logs:
        return None
    return sum(float(m.group(1)) for log in logs for m in _PEER_EVALUATED.finditer(log.read_text()))


def _best_of(out_dir: Path) -> float | None:
    """A peer's best combined_score, from the best program it saved."""
    for path in out_dir.rglob("best_program_info.json"):
        metrics = json.loads(path.read_text()).get("metrics") or {}
        if isinstance(metrics.get("combined_score"), int | float):
            return float(metrics["combined_score"])
    return None


def openevolve_run(
    oracle: Path, folder: Path, iterations: int, seed: int, api_base: str, work: Path
) -> dict[str, Any]:
    config_file = folder / "config.yaml"
    config: dict[str, Any] = {}
    if config_file.exists():
        config = yaml.safe_load(config_file.read_text()) or {}
    config["max_iterations"] = iterations
    config["random_seed"] = seed
    llm = config.setdefault("llm", {})
    llm.update(api_base=api_base, api_key="none")
    llm["models"] = [{"name": MODEL, "weight": 1.0}]
    for key in ("primary_model", "secondary_model", "primary_model_weight"):
        llm.pop(key, None)
    llm.pop("secondary_model_weight", None)
    path = work / f"oe-{time.monotonic_ns()}.yaml"
    path.write_text(yaml.safe_dump(config))
    cmd = [
        str(oracle.parent / "openevolve-run"), str(folder / "initial_program.py"),
        str(folder / "evaluator.py"), "-c", str(path), "-o", str(path.with_suffix("")),
        "-i", str(iterations),
    ]  # fmt: skip
    out = timed(cmd, env_for(api_base), cwd=work)
    out["best"] = _best_of(path.with_suffix(""))
    out["eval_s"] = _peer_eval_s(path.with_suffix(""))
    return out


def skydiscover_run(
    oracle: Path, folder: Path, iterations: int, seed: int, api_base: str, work: Path
) -> dict[str, Any]:
    config = yaml.safe_load((folder / "config.yaml").read_text()) or {}
    config["max_iterations"] = iterations
    config["random_seed"] = seed
    # No dashboard server or human-feedback prompt in a benchmark; the LLM is the shared one.
    config.setdefault("monitor", {})["enabled"] = False
    config["human_feedback_enabled"] = False
    llm = config.setdefault("llm", {})
    llm.update(api_base=api_base, api_key="none")
    llm["models"] = [{"name": MODEL, "weight": 1.0}]
    path = work / f"sd-{time.monotonic_ns()}.yaml"
    path.write_text(yaml.safe_dump(config))
    cmd = [
        str(oracle.parent / "skydiscover-run"), str(folder / "initial_program.py"),
        str(folder / "evaluator.py"), "-c", str(path), "-o", str(path.with_suffix("")),
        "-i", str(iterations), "-s", "topk", "--api-base", api_base, "-m", MODEL,
    ]  # fmt: skip
    out = timed(cmd, env_for(api_base), cwd=work)
    out["best"] = _best_of(path.with_suffix(""))
    out["eval_s"] = _peer_eval_s(path.with_suffix(""))
    return out


# -- sections ------------------------------------------------------------------------------------

BARE = """
import importlib.util, json, os, resource, sys
import numpy  # the bare process has numpy imported already
folder, n, stages, compat = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4]
sys.path.insert(0, folder)
sys.path += [compat, os.path.dirname(compat)]  # the openevolve shims, as in the sandbox
spec = importlib.util.spec_from_file_location("evaluator", os.path.join(folder, "evaluator.py"))
ev = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ev)
program = os.path.join(folder, "initial_program.py")
devnull = open(os.devnull, "w")

def cascade():
    for function, threshold in stages:
        metrics = getattr(ev, function)(program)
        metrics = getattr(metrics, "metrics", metrics)
        score = metrics.get("combined_score", 0.0) if isinstance(metrics, dict) else 0.0
        if threshold is not None and score < threshold:
            return

def cpu():
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime

stdout, sys.stdout = sys.stdout, devnull
cascade()
start = cpu()
for _ in range(n):
    cascade()
sys.stdout = stdout
print(json.dumps({"cpu_s_per_eval": (cpu() - start) / n}))
"""


def bare_cpu(folder: Path, n: int, python: Path) -> float:
    from harness.evaluation.task import load_task
    from harness.sandbox._runtime import COMPAT_DIR

    stages = [[s.function, s.threshold] for s in load_task(folder).card.stages]
    done = subprocess.run(
        [str(python), "-c", BARE, str(folder), str(n), json.dumps(stages), str(COMPAT_DIR)],
        capture_output=True, text=True, check=True, cwd=tempfile.gettempdir(),
    )  # fmt: skip
    return float(json.loads(done.stdout.strip().splitlines()[-1])["cpu_s_per_eval"])


async def sandboxed_cpu(folder: Path, n: int) -> dict[str, float]:
    from harness.evaluation.driver import TaskEvaluator
    from harness.evaluation.task import load_task
    from harness.sandbox.docker_backend import DockerBackend

    task = load_task(folder)
    backend = DockerBackend()
    evaluator = TaskEvaluator(task, backend, run_id="safety-tax-cpu")
    source = task.initial_program or ""
    try:
        for i in range(6):  # fill the pool, warm the containers up
            result = await evaluator.evaluate(source, program_id=f"w{i}", iteration=i)
            assert result.status == "ok", result.error
        await asyncio.sleep(1.0)
        before = set(backend.history)
        meter = SandboxCPU(lambda: list(backend._live))
        busy0, t0 = machine_busy_s(), time.monotonic()
        meter.start()
        for i in range(n):
            result = await evaluator.evaluate(source, program_id=f"m{i}", iteration=i)
            assert result.status == "ok", result.error
        await asyncio.sleep(0.3)  # the last container's next box is prepared: part of the cost
        meter.stop()
        busy, elapsed = machine_busy_s() - busy0, time.monotonic() - t0
        started = len(set(backend.history) - before)
    finally:
        await evaluator.aclose()
    return {
        "sandbox_s": meter.sandbox_s / n,
        "engine_s": meter.engine / n,
        "own_s": meter.own / n,
        "containers_s": (meter.cgroups + meter.shims) / n,
        "machine_s": busy / n,
        "elapsed_s": elapsed,
        "containers_started": started,
    }


def section_cpu(args: argparse.Namespace, report: Report) -> None:
    folder = args.oe / "circle_packing"
    # The peers' own interpreter (the evaluator starts sys.executable for every program); ours
    # is an editable install whose import hook adds ~30 ms to every interpreter start.
    python = args.oracle if args.oracle.exists() else ROOT / ".venv" / "bin" / "python"
    bare = bare_cpu(folder, args.cpu_n, python)
    report.note(f"cpu: the bare process is {python}")
    background = background_rate(3.0)
    sand = asyncio.run(sandboxed_cpu(folder, args.cpu_n))
    machine_net = sand["machine_s"] - background * sand["elapsed_s"] / args.cpu_n
    report.row("cpu", "bare process (numpy imported), CPU per evaluation", bare * 1e3, "ms")
    report.row(
        "cpu", "sandboxed, attributed: host process + containers + shims", sand["sandbox_s"] * 1e3,
        "ms", ratio=sand["sandbox_s"] / bare, goal=1.5,
    )  # fmt: skip
    report.row(
        "cpu", "sandboxed, + the engine's daemons (shared with other users)",
        (sand["sandbox_s"] + sand["engine_s"]) * 1e3, "ms",
        ratio=(sand["sandbox_s"] + sand["engine_s"]) / bare, goal=1.5,
    )  # fmt: skip
    report.row(
        "cpu", f"sandboxed, machine-wide minus background ({background:.2f} cores)",
        machine_net * 1e3, "ms", ratio=machine_net / bare,
    )  # fmt: skip
    report.note(
        f"cpu: {args.cpu_n} evaluations, {sand['containers_started']} containers started "
        f"during them; host process {sand['own_s'] * 1e3:.1f} ms, containers and shims "
        f"{sand['containers_s'] * 1e3:.1f} ms, engine daemons {sand['engine_s'] * 1e3:.1f} ms "
        "per evaluation"
    )


def compare_e2e(args: argparse.Namespace, report: Report, label: str) -> tuple[float, float] | None:
    """Galapagos, OpenEvolve and SkyDiscover on circle packing (the table of issue 27); returns
    Galapagos' wall over OpenEvolve's, plain and on the same work (None without OpenEvolve)."""
    results: dict[str, list[dict[str, Any]]] = {
        "galapagos": [],
        "openevolve": [],
        "skydiscover": [],
    }
    with shared_endpoint(args.seed) as api_base, tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for _ in range(args.repeat):
            results["galapagos"].append(
                galapagos_run(args.oe / "circle_packing", "best_of_n", args.iterations,
                              args.seed, api_base, work)
            )  # fmt: skip
            if args.oracle.exists():
                results["openevolve"].append(
                    openevolve_run(args.oracle, args.oe / "circle_packing", args.iterations,
                                   args.seed, api_base, work)
                )  # fmt: skip
                if args.sd is not None:
                    results["skydiscover"].append(
                        skydiscover_run(args.oracle, args.sd / "math" / "circle_packing",
                                        args.iterations, args.seed, api_base, work)
                    )  # fmt: skip
    wall = {k: statistics.median(r["wall_s"] for r in v) for k, v in results.items() if v}
    cpu = {k: statistics.median(r["cpu_s"] for r in v) for k, v in results.items() if v}
    peak = {k: max(r["peak_mb"] for r in v) for k, v in results.items() if v}
    spread = {
        k: f"{min(r['wall_s'] for r in v):.1f}–{max(r['wall_s'] for r in v):.1f} s"
        for k, v in results.items()
        if v
    }
    for name in ("openevolve", "skydiscover"):
        if name not in wall:
            report.note(f"{label}: {name} skipped (not installed, or its folder not found)")
    g = results["galapagos"]
    report.note(
        f"{label}: best scores — Galapagos {[round(r['best'] or 0, 3) for r in g]}, OpenEvolve "
        f"{[round(r['best'] or 0, 3) for r in results['openevolve']]}, SkyDiscover "
        f"{[round(r['best'] or 0, 3) for r in results['skydiscover']]}; Galapagos ran "
        f"{[r['stages'] for r in g]} cascade stages for {[r['evaluations'] for r in g]} "
        "evaluations (a program past the first stage's threshold runs the second too)"
    )
    oe, sd = wall.get("openevolve"), wall.get("skydiscover")
    report.row(label, f"OpenEvolve wall ({spread.get('openevolve', '-')})", oe, "s")
    report.row(label, f"SkyDiscover topk wall ({spread.get('skydiscover', '-')})", sd, "s")
    report.row(
        label, f"Galapagos best_of_n wall ({spread['galapagos']}) / OpenEvolve", wall["galapagos"],
        "s", ratio=wall["galapagos"] / oe if oe else None, goal=1.0,
    )  # fmt: skip
    report.row(
        label, "Galapagos wall / SkyDiscover", wall["galapagos"], "s",
        ratio=wall["galapagos"] / sd if sd else None, goal=0.5,
    )  # fmt: skip
    # OpenEvolve's programs stay below the first stage's threshold (one stage per evaluation);
    # Galapagos' search passes it in some runs (a second stage each time).  On the same work:
    # each Galapagos run without its extra stages, at its own measured cost per stage.
    same = statistics.median(same_work_wall(r) for r in g)
    report.row(
        label, "Galapagos wall on the same work (one stage per evaluation) / OpenEvolve", same,
        "s", ratio=same / oe if oe else None,
    )  # fmt: skip
    # The search path sets how many cascade stages run (the programs each one finds), so the
    # wall above depends on it; what each harness adds around its evaluations does not: the
    # wall minus the time the evaluator itself spent (Galapagos: the stages' own times in the
    # container; the peers: the times their logs give for each program).
    outside = {
        k: statistics.median(r["wall_s"] - r["eval_s"] for r in v)
        for k, v in results.items()
        if v and all(r.get("eval_s") is not None for r in v)
    }
    evals = {
        k: statistics.median(r["eval_s"] for r in v) for k, v in results.items() if k in outside
    }
    for name in ("openevolve", "skydiscover"):
        report.row(label, f"{name} time in evaluation (its log)", evals.get(name), "s")
        report.row(label, f"{name} wall outside evaluation", outside.get(name), "s")
    g_out = outside.get("galapagos")
    report.row(label, "Galapagos time in evaluation (stages, in the container)",
               evals.get("galapagos"), "s")  # fmt: skip
    for name, title in (("openevolve", "OpenEvolve"), ("skydiscover", "SkyDiscover")):
        peer = outside.get(name)
        report.row(
            label, f"Galapagos wall outside evaluation / {title}", g_out, "s",
            ratio=g_out / peer if g_out is not None and peer else None,
        )  # fmt: skip
    report.row(label, "OpenEvolve CPU (process tree)", cpu.get("openevolve"), "s")
    report.row(label, "SkyDiscover CPU (process tree)", cpu.get("skydiscover"), "s")
    report.row(
        label, "Galapagos CPU (process tree + containers + shims) / OpenEvolve",
        cpu["galapagos"], "s", ratio=cpu["galapagos"] / cpu["openevolve"] if "openevolve" in cpu
        else None,
    )  # fmt: skip
    if label == "e2e":
        report.row(label, "OpenEvolve peak memory (PSS)", peak.get("openevolve"), "MiB")
        report.row(label, "SkyDiscover peak memory (PSS)", peak.get("skydiscover"), "MiB")
        report.row(
            label, "Galapagos peak memory (PSS, host + containers + shims) / OpenEvolve",
            peak["galapagos"], "MiB",
            ratio=peak["galapagos"] / peak["openevolve"] if "openevolve" in peak else None,
            goal=2.0,
        )  # fmt: skip
    return (wall["galapagos"] / oe, same / oe) if oe else None


def same_work_wall(run: dict[str, Any]) -> float:
    """A Galapagos run's wall without the stages beyond one per evaluation, each charged at
    the run's own cost per stage (its time in evaluation over its stages)."""
    stages, evaluations, eval_s = run["stages"], run["evaluations"], run.get("eval_s")
    if not stages or eval_s is None or stages <= evaluations:
        return float(run["wall_s"])
    return float(run["wall_s"]) - (stages - evaluations) * float(eval_s) / stages


def build_images_first(args: argparse.Namespace) -> None:
    """Untimed seed-only runs of the folders the sections time: an image the sandbox lacks (the
    runtime changed since it was built, a folder's requirements) is built here, not inside the
    first timed run."""
    with shared_endpoint(args.seed) as api_base, tempfile.TemporaryDirectory() as tmp:
        for name in ("circle_packing", "function_minimization"):
            galapagos_run(args.oe / name, "best_of_n", 0, args.seed, api_base, Path(tmp))


def section_parallel(args: argparse.Namespace, report: Report) -> None:
    """``--repeat`` pairs of runs (one at a time, four at once) per scaffold.

    The two runs of a pair search apart (their programs differ), so one may run more cascade
    stages than the other: a program past the first stage's threshold runs the second too
    (≈0.1 s of CPU).  A pair of 41 stages one at a time against 65 four at once compares
    different work, and its plain ratio (the runs' spans) moves with it (3.3–4.3× for the same
    code).  The goal is judged on the same work: the run one at a time as if it had run the
    other's stages, each costing what its own stages cost on average (time in evaluation,
    measured in the container, over its stages); the plain ratio is printed beside it."""
    folder = args.oe / "circle_packing"
    with shared_endpoint(args.seed, latency=0.5) as api_base, tempfile.TemporaryDirectory() as t:
        for scaffold in args.scaffolds.split(","):
            runs: dict[int, list[dict[str, Any]]] = {1: [], 4: []}
            for _ in range(max(1, args.repeat)):
                for parallel in (1, 4):
                    runs[parallel].append(
                        galapagos_run(
                            folder,
                            scaffold,
                            args.parallel_iterations,
                            args.seed,
                            api_base,
                            Path(t),
                            ("--set", f"general.max_parallel_iterations={parallel}"),
                        )  # fmt: skip
                    )
            plain = [a["run_s"] / b["run_s"] for a, b in zip(runs[1], runs[4], strict=True)]
            same = [
                (a["run_s"] + a["eval_s"] / a["stages"] * (b["stages"] - a["stages"])) / b["run_s"]
                for a, b in zip(runs[1], runs[4], strict=True)
            ]
            span = {p: statistics.median(r["run_s"] for r in v) for p, v in runs.items()}
            wall = {p: statistics.median(r["wall_s"] for r in v) for p, v in runs.items()}
            report.row(
                "parallel", f"{scaffold}: speed-up of 4 over 1, same work (median of "
                f"{len(same)} pairs, each {min(same):.2f}–{max(same):.2f}×)",
                statistics.median(same), "×", ratio=None, goal=3.6, higher=True,
            )  # fmt: skip
            report.row(
                "parallel", f"{scaffold}: plain speed-up (median run {span[1]:.1f} → "
                f"{span[4]:.1f} s, each pair {min(plain):.2f}–{max(plain):.2f}×; whole process "
                f"{wall[1]:.1f} → {wall[4]:.1f} s, {wall[1] / wall[4]:.2f}×)",
                span[1] / span[4], "×",
            )  # fmt: skip
            report.note(
                f"parallel: {scaffold}: one at a time ran {[r['stages'] for r in runs[1]]} "
                f"cascade stages, four at once {[r['stages'] for r in runs[4]]} (for "
                f"{args.parallel_iterations} iterations and the seed)"
            )


def section_fast(args: argparse.Namespace, report: Report) -> None:
    """OpenEvolve runs this folder's evaluations three at a time (its config.yaml sets
    ``evaluator.parallel_evaluations: 3``); Galapagos' folder reader does not map that key, so
    Galapagos is measured as it runs by default and with the same three in flight."""
    folder = args.oe / "function_minimization"
    config = yaml.safe_load((folder / "config.yaml").read_text()) or {}
    parallel = int((config.get("evaluator") or {}).get("parallel_evaluations", 1))
    matched = ("--set", f"general.max_parallel_iterations={parallel}")
    with shared_endpoint(args.seed) as api_base, tempfile.TemporaryDirectory() as tmp:
        ours: dict[str, list[float]] = {"default": [], "matched": []}
        theirs = []
        for _ in range(args.repeat):
            for name, extra in (("default", ()), ("matched", matched)):
                ours[name].append(galapagos_run(folder, "best_of_n", args.iterations, args.seed,
                                                api_base, Path(tmp), extra)["wall_s"])  # fmt: skip
            if args.oracle.exists():
                theirs.append(openevolve_run(args.oracle, folder, args.iterations, args.seed,
                                             api_base, Path(tmp))["wall_s"])  # fmt: skip
    oe = statistics.median(theirs) if theirs else None
    report.row("fast", f"OpenEvolve wall (function_minimization, {parallel} evaluations at once)",
               oe, "s")  # fmt: skip
    g = statistics.median(ours["matched"])
    report.row("fast", f"Galapagos best_of_n wall, {parallel} iterations at once / OpenEvolve", g,
               "s", ratio=g / oe if oe else None, goal=2.0)  # fmt: skip
    d = statistics.median(ours["default"])
    report.row("fast", "Galapagos best_of_n wall, one iteration at a time / OpenEvolve", d, "s",
               ratio=d / oe if oe else None)  # fmt: skip


def section_cli(args: argparse.Namespace, report: Report) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "runs.sqlite"
        subprocess.run(
            [str(GALAPAGOS), "run", "-s", "best_of_n", "-t", "function_minimization", "-i", "1",
             "--sandbox", "local", "--store", str(store), "--quiet"],
            capture_output=True, check=True, env={**os.environ, "OPENAI_API_KEY": "none"},
        )  # fmt: skip
        for label, cmd in (
            ("galapagos --version", [str(GALAPAGOS), "--version"]),
            ("galapagos runs", [str(GALAPAGOS), "runs", "--store", str(store)]),
        ):
            samples = []
            for _ in range(7):
                t = time.perf_counter()
                subprocess.run(cmd, capture_output=True, check=True, env=galapagos_env(""))
                samples.append(time.perf_counter() - t)
            report.row("cli", f"{label} (median of 7)", statistics.median(samples), "s",
                       ratio=None, goal=0.3, absolute=True)  # fmt: skip


# -- the table -----------------------------------------------------------------------------------


class Report:
    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []
        self.notes: list[str] = []

    def row(
        self, section: str, what: str, value: float | None, unit: str, *,
        ratio: float | None = None, goal: float | None = None, higher: bool = False,
        absolute: bool = False,
    ) -> None:  # fmt: skip
        judged = value if absolute or (higher and ratio is None) else ratio
        met = None
        if goal is not None and judged is not None:
            met = judged >= goal if higher else judged <= goal
        self.rows.append({"section": section, "what": what, "value": value, "unit": unit,
                          "ratio": ratio, "goal": goal, "met": met, "higher": higher})  # fmt: skip
        self._print(self.rows[-1])

    def note(self, text: str) -> None:
        self.notes.append(text)
        print(f"  note: {text}", flush=True)

    @staticmethod
    def _print(r: dict[str, Any]) -> None:
        value = "-" if r["value"] is None else f"{r['value']:.{3 if r['unit'] == 's' else 1}f}"
        ratio = "" if r["ratio"] is None else f"  ratio {r['ratio']:.2f}"
        goal = ""
        if r["goal"] is not None:
            goal = f"  goal {'≥' if r['higher'] else '≤'} {r['goal']:g}"
            goal += {True: "  MET", False: "  NOT MET", None: ""}[r["met"]]
        print(f"{r['section']:>8}  {r['what']}: {value} {r['unit']}{ratio}{goal}", flush=True)


def conditions() -> str:
    load = os.getloadavg()
    busy = background_rate(2.0)
    return (
        f"{os.cpu_count()} cores, load average {load[0]:.2f}/{load[1]:.2f}/{load[2]:.2f}, "
        f"{busy:.2f} cores busy with other work before the benchmark"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(SECTIONS), help="comma-separated sections")
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--parallel-iterations", type=int, default=40)
    parser.add_argument(
        "--scaffolds", default=",".join(PARALLEL_SCAFFOLDS), help="for the parallel section"
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per program (median)")
    parser.add_argument("--cpu-n", type=int, default=40, help="evaluations measured (cpu)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--oracle-python", default=str(ROOT / ".oracle-venv" / "bin" / "python"))
    parser.add_argument("--openevolve-examples", default=None)
    parser.add_argument("--skydiscover-benchmarks", default=None)
    parser.add_argument("--json", action="store_true", help="print the rows as JSON at the end")
    args = parser.parse_args()
    args.oracle = Path(args.oracle_python)
    args.oe = first_dir(
        args.openevolve_examples, os.environ.get("OPENEVOLVE_EXAMPLES"), "/tmp/peers/oe/examples"
    )
    args.sd = first_dir(
        args.skydiscover_benchmarks, os.environ.get("SKYDISCOVER_BENCHMARKS"),
        "/tmp/peers/sd/benchmarks",
    )  # fmt: skip
    if args.oe is None:
        raise SystemExit(
            "OpenEvolve's examples folder was not found: pass --openevolve-examples "
            "(a checkout of OpenEvolve 0.4.0's examples/)"
        )
    if shutil.which("docker") is None:
        raise SystemExit("the Docker CLI is missing: start the engine (scripts/docker-engine.sh)")
    report = Report()
    compile_galapagos()
    chosen = [s.strip() for s in args.only.split(",") if s.strip()]
    if set(chosen) - {"cli"}:
        build_images_first(args)
    print(f"conditions: {conditions()}", flush=True)
    idle: dict[str, tuple[float, float] | None] = {}  # the e2e section's ratios, for "loaded"
    runners: dict[str, Callable[[], Any]] = {
        "cpu": lambda: section_cpu(args, report),
        "e2e": lambda: idle.update(e2e=compare_e2e(args, report, "e2e")),
        "loaded": lambda: loaded(args, report, idle.get("e2e")),
        "parallel": lambda: section_parallel(args, report),
        "fast": lambda: section_fast(args, report),
        "cli": lambda: section_cli(args, report),
    }
    for name in chosen:
        if name not in runners:
            raise SystemExit(f"unknown section {name!r}; valid: {', '.join(SECTIONS)}")
        runners[name]()
    if args.json:
        print(json.dumps({"rows": report.rows, "notes": report.notes}, indent=2))


def loaded(args: argparse.Namespace, report: Report, idle: tuple[float, float] | None) -> None:
    """The e2e comparison with both cores saturated, against ``idle`` (the e2e section's
    ratios in this script run: plain, same work).  The goal is judged on the same work (as
    ``section_parallel`` does): the idle and loaded runs of Galapagos search apart and pass the
    first stage's threshold in different numbers, so the plain ratio compares different work;
    it is printed beside."""
    with saturated():
        ratios = compare_e2e(args, report, "loaded")
    if ratios is None or idle is None:
        return
    (plain, same), (idle_plain, idle_same) = ratios, idle
    report.row("loaded", "Galapagos/OpenEvolve under load vs idle, same work", same / idle_same,
               "×", ratio=same / idle_same, goal=1.0)  # fmt: skip
    report.row("loaded", "Galapagos/OpenEvolve under load vs idle, plain", plain / idle_plain,
               "×", ratio=plain / idle_plain)  # fmt: skip


if __name__ == "__main__":
    main()
