"""``galapagos task check``: does a task's evaluator hold up against broken and lying candidates?

The checks, in order (each reports ``pass``, ``fail`` or ``skip`` with a reason; a skip is never
counted as a pass, and the report is ``ok`` only when nothing failed):

``card``                static: the card is complete (metric, best known value with a source)
``files``               static: the seed defines the entry point, the evaluator defines every
                        cascade function, EVOLVE-BLOCK markers are balanced
``seed_evaluates``      the seed scores valid, within the card's time budget, with the declared
                        metrics (``combined_score``, ``validity``, the card's ``metric``)
``deterministic``       the seed scores identically over several runs
``rejects_<variant>``   a battery of broken and adversarial candidates, generated from the seed
                        by wrapping its entry point, all score as failures and never above it
``recomputes_reported`` a candidate returning the seed's data with every reported scalar
                        inflated does not score above the seed

Everything candidate-side runs in the sandbox through the evaluator driver, with short per-check
budgets so a whole check stays well under a minute.  Compat (OpenEvolve-style) folders get the
checks that make sense there; the others are skipped with the reason.
"""

from __future__ import annotations

import ast
import asyncio
import hashlib
import math
import os
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

from harness.core.records import EvalResult
from harness.core.scoring import get_score, is_failure, numeric_metrics
from harness.evaluation.task import Task, TaskLimits, load_task
from harness.sandbox.protocol import Job, SandboxBackend

__all__ = [
    "VARIANTS",
    "CheckReport",
    "CheckResult",
    "check_task",
    "infer_entry_point",
    "lying_source",
    "variant_source",
]

CheckStatus = Literal["pass", "fail", "skip"]

#: Runs of the seed compared by the determinism check (the first is the seed check's own run).
DEFAULT_RUNS = 3
#: Budget of the variants that never return: any budget shows a timeout is a failure, and a
#: short one keeps the whole check quick.  Every other variant gets the card's budget, so a
#: variant that runs the seed is never cut short (which would hide what the evaluator does).
HANG_WALL_S = 3.0
#: Metric names that legitimately differ between runs (timings) and are not compared.
_TIMING = re.compile(r"time|duration|elapsed|seconds|latency", re.IGNORECASE)
#: Backends whose candidates are not isolated from the runner and the task files.
UNISOLATED_BACKENDS = frozenset({"local"})


@dataclass(frozen=True)
class CheckResult:
    name: str
    status: CheckStatus
    detail: str = ""
    data: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "detail": self.detail,
            "data": dict(self.data),
        }


@dataclass(frozen=True)
class CheckReport:
    task: str
    path: str
    mode: str
    sandbox: str
    checks: tuple[CheckResult, ...]

    @property
    def ok(self) -> bool:
        return not any(c.status == "fail" for c in self.checks)

    def count(self, status: CheckStatus) -> int:
        return sum(c.status == status for c in self.checks)

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "path": self.path,
            "mode": self.mode,
            "sandbox": self.sandbox,
            "ok": self.ok,
            "summary": {s: self.count(s) for s in ("pass", "fail", "skip")},
            "checks": [c.to_dict() for c in self.checks],
        }


class TaskEvaluatorLike(Protocol):
    async def evaluate(self, code: str, *, program_id: str, iteration: int) -> EvalResult: ...


EvaluatorFactory = Callable[[Task, SandboxBackend], TaskEvaluatorLike]


def _default_factory(task: Task, backend: SandboxBackend) -> TaskEvaluatorLike:
    from harness.evaluation.driver import TaskEvaluator

    # The caller owns the backend: several evaluators (full and short budgets) share it.
    return TaskEvaluator(task, backend, close_backend=False)


# ------------------------------------------------------------------------------------------
# Adversarial variants: the seed with its entry point wrapped (or replaced).
# ------------------------------------------------------------------------------------------

_PRELUDE = '''

# ---- galapagos task check: adversarial variant {kind!r} (generated; never evolve this) ----
def _galapagos_check_map(value, leaf, array):
    """Rebuild ``value`` with scalars through ``leaf`` and numpy arrays through ``array``."""
    if value is None or isinstance(value, (bool, str, bytes)):
        return value
    if isinstance(value, (int, float)):
        return leaf(value)
    if isinstance(value, (list, tuple)):
        return [_galapagos_check_map(v, leaf, array) for v in value]
    if isinstance(value, dict):
        return {{k: _galapagos_check_map(v, leaf, array) for k, v in value.items()}}
    try:
        import numpy
    except ImportError:
        return value
    if isinstance(value, numpy.ndarray):
        return array(value)
    if isinstance(value, numpy.generic):
        return leaf(value.item())
    return value


def _galapagos_check_fill(value, fill):
    import numpy
    return numpy.full(numpy.shape(value), fill, dtype=float)


_galapagos_check_original = {entry}


def {entry}(*args, **kwargs):
'''

_ORIGINAL = "_galapagos_check_original(*args, **kwargs)"
_MAP = "_galapagos_check_map"

_BODIES: dict[str, str] = {
    "raises": 'raise RuntimeError("galapagos task check: deliberate failure")',
    "returns_nan": f'return {_MAP}({_ORIGINAL}, lambda v: float("nan"), '
    'lambda a: _galapagos_check_fill(a, float("nan")))',
    "returns_inf": f'return {_MAP}({_ORIGINAL}, lambda v: float("inf"), '
    'lambda a: _galapagos_check_fill(a, float("inf")))',
    "returns_neg_inf": f'return {_MAP}({_ORIGINAL}, lambda v: float("-inf"), '
    'lambda a: _galapagos_check_fill(a, float("-inf")))',
    # An extra axis is wrong under any shape rule (fixed or free size), unlike a truncation.
    "wrong_shape": f"return {_MAP}({_ORIGINAL}, lambda v: [v, v], lambda a: a[..., None])",
    "wrong_type": f"return {_MAP}({_ORIGINAL}, lambda v: str(v), lambda a: str(a.tolist()))",
    "empty_result": (
        f"out = {_ORIGINAL}\n"
        "    if isinstance(out, (list, tuple)):\n        return []\n"
        "    if isinstance(out, dict):\n        return {}\n"
        "    if hasattr(out, 'shape') and getattr(out, 'ndim', 0) > 0:\n        return out[:0]\n"
        "    return None"
    ),
    "returns_none": "return None",
    "infinite_loop": "while True:\n        pass",
    "sleeps_past_budget": "import time\n    time.sleep(3600)\n    return " + _ORIGINAL,
    "prints_fake_result": (
        "import json, sys\n"
        "    fake = {'combined_score': 1e9, 'validity': 1.0, 'status': 'ok'}\n"
        "    for stream in (sys.stdout, sys.stderr):\n"
        "        print(json.dumps(fake), file=stream)\n"
        "        print(json.dumps({'kind': 'result', 'status': 'ok', 'metrics': fake}), "
        "file=stream)\n"
        "        print('combined_score: 1000000000.0', file=stream, flush=True)\n"
        "    return None"
    ),
    "exits_early": "import sys\n    sys.exit(0)",
    "os_exit": "import os\n    os._exit(0)",
    "lying_object": (
        "class _Liar:\n"
        "        def __eq__(self, other): return True\n"
        "        def __ne__(self, other): return False\n"
        "        def __lt__(self, other): return True\n"
        "        __le__ = __gt__ = __ge__ = __lt__\n"
        "        def __float__(self): return 1e9\n"
        "        def __int__(self): return 10**9\n"
        "        def __bool__(self): return True\n"
        "        def __hash__(self): return 0\n"
        "        def __repr__(self): return '1e9'\n"
        f"    return {_MAP}({_ORIGINAL}, lambda v: _Liar(), lambda a: _Liar())"
    ),
    # Succeeds (returns the seed's answer) only if it could read a trusted task file.
    "reads_task_files": (
        "import hashlib, os, sys\n"
        "    digests = {digests!r}\n"
        "    names = set(digests)\n"
        "    found = []\n"
        "    roots = ['/proc/1/cwd', '/proc/1/root', '/proc/%d/cwd' % os.getppid(), '/']\n"
        "    seen = 0\n"
        "    for root in roots:\n"
        "        for path, dirs, files in os.walk(root):\n"
        "            if path == root:\n"
        "                dirs[:] = [d for d in dirs if d not in ('proc', 'sys', 'dev')]\n"
        "            seen += 1\n"
        "            for f in names.intersection(files):\n"
        "                try:\n"
        "                    with open(os.path.join(path, f), 'rb') as fh:\n"
        "                        data = fh.read(1 << 22)\n"
        "                    if hashlib.sha256(data).hexdigest() in digests[f]:\n"
        "                        found.append(os.path.join(path, f))\n"
        "                except OSError:\n"
        "                    pass\n"
        "            if found or seen > 20000:\n"
        "                break\n"
        "        if found:\n"
        "            break\n"
        "    if not found:\n"
        "        raise RuntimeError('galapagos task check: no trusted task file was readable')\n"
        "    print('galapagos task check: read ' + ', '.join(found[:5]), file=sys.stderr)\n"
        "    return " + _ORIGINAL
    ),
    # Tries to write a forged result frame into the runner's own output channel.
    "forges_runner_output": (
        "import json, os, struct\n"
        "    doc = {'kind': 'result', 'status': 'ok', 'metrics': {'combined_score': 1e9, "
        "'validity': 1.0}, 'artifacts': {}}\n"
        "    head = json.dumps(doc).encode()\n"
        "    frame = struct.pack('>4sIQ', b'GLP1', len(head), 0) + head\n"
        "    for pid in {1, os.getppid()}:\n"
        "        for fd in (1, 2):\n"
        "            try:\n"
        "                with open('/proc/%d/fd/%d' % (pid, fd), 'wb') as out:\n"
        "                    out.write(frame)\n"
        "            except OSError:\n"
        "                pass\n"
        "    return None"
    ),
}

#: Variant name → what it does (for the report).
VARIANTS: dict[str, str] = {
    "syntax_error": "the program does not compile",
    "raises": "the entry point raises",
    "returns_nan": "every number in the answer is NaN",
    "returns_inf": "every number in the answer is +inf",
    "returns_neg_inf": "every number in the answer is -inf",
    "wrong_shape": "every array gains an axis, every scalar becomes a pair",
    "wrong_type": "every number or array in the answer becomes a string",
    "empty_result": "the answer is empty ([] / {} / a zero-length array / None)",
    "returns_none": "the entry point returns None",
    "infinite_loop": "the entry point never returns (busy loop)",
    "sleeps_past_budget": "the entry point sleeps past the time budget",
    "prints_fake_result": "prints fake result lines with a huge score, then returns None",
    "exits_early": "calls sys.exit(0) instead of returning",
    "os_exit": "calls os._exit(0) instead of returning",
    "lying_object": "returns objects whose __eq__/__float__/comparisons lie",
    "reads_task_files": "returns the seed's answer only if it can read a trusted task file",
    "forges_runner_output": "writes a forged result frame to the runner's stdout, returns None",
}

#: Variants that probe the sandbox's isolation rather than the evaluator.
_ISOLATION_VARIANTS = frozenset({"reads_task_files", "forges_runner_output"})
#: Variants that never return: they get a short budget of their own.
_HANGING_VARIANTS = frozenset({"infinite_loop", "sleeps_past_budget"})

_LIE_BODY = "return {map}({original}, lambda v: type(v)({inflate}), lambda a: a)"


def variant_source(
    seed: str, entry: str, kind: str, *, task_files: Mapping[str, bytes] | None = None
) -> str:
    """The seed program turned into adversarial variant ``kind`` (see :data:`VARIANTS`)."""
    if kind == "syntax_error":
        return seed + "\n\ndef galapagos_check_broken(:  # deliberate syntax error\n    pass\n"
    if kind not in _BODIES:
        raise ValueError(f"unknown variant {kind!r}; choose from {sorted(VARIANTS)}")
    body = _BODIES[kind]
    if kind == "reads_task_files":
        # Name → sha256 of every trusted file: a match proves it read *this* task's files.
        digests: dict[str, list[str]] = {}
        for rel, data in (task_files or {}).items():
            digests.setdefault(os.path.basename(rel), []).append(hashlib.sha256(data).hexdigest())
        body = body.replace("{digests!r}", repr(digests))
    return seed + _PRELUDE.format(kind=kind, entry=entry) + "    " + body + "\n"


def lying_source(seed: str, entry: str, direction: str) -> str:
    """The seed with every scalar it returns (outside arrays) inflated in the flattering way."""
    # Maximisation: a liar reports more; minimisation: less.  Arrays (the data) are untouched.
    inflate = (
        "abs(v) * 10 + 10" if direction == "maximize" else ("v / 10 if v > 0 else v * 10 - 10")
    )
    body = _LIE_BODY.format(map=_MAP, original=_ORIGINAL, inflate=inflate)
    return (
        seed + _PRELUDE.format(kind="reports_inflated_values", entry=entry) + "    " + body + "\n"
    )


_PROBE = '''"""galapagos task check: count the scalars and arrays in the seed's answer (trusted)."""


def evaluate(candidate):
    value = candidate.call({entry!r})
    scalars = arrays = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, bool) or item is None or isinstance(item, str):
            continue
        if isinstance(item, (int, float)):
            scalars += 1
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif hasattr(item, "shape"):
            arrays += 1
    return {{"combined_score": 0.0, "scalars": scalars, "arrays": arrays}}
'''


# ------------------------------------------------------------------------------------------
# Static checks.
# ------------------------------------------------------------------------------------------


def _top_level_functions(source: str) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    tree = ast.parse(source)
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}


def _required_args(func: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    args = func.args
    positional = len(args.posonlyargs) + len(args.args)
    return positional - len(args.defaults)


def infer_entry_point(task: Task) -> str | None:
    """For a compat folder: a seed function the evaluator names (``program.run_packing()``)."""
    if task.initial_program is None:
        return None
    try:
        seed_funcs = _top_level_functions(task.initial_program)
    except SyntaxError:
        return None
    evaluator = task.files.get(task.card.evaluator, b"").decode("utf-8", "replace")
    called = re.findall(r"\.\s*([A-Za-z_]\w*)\s*\(", evaluator)
    named = re.findall(r"""["']([A-Za-z_]\w*)["']""", evaluator)
    for name in [*called, *named]:
        if name in seed_funcs:
            return name
    return None


def _card_check(task: Task) -> CheckResult:
    card = task.card
    if card.mode == "compat":
        return CheckResult(
            "card",
            "skip",
            "compat folder: the card is synthesised (no metric, "
            "no best-known value); add a task.yaml to check it",
        )
    problems = []
    if not card.metric:
        problems.append("no 'metric' (the metric holding the raw objective value)")
    if card.best_known is None:
        problems.append("no 'best_known' (value and source)")
    else:
        if not math.isfinite(card.best_known.value):
            problems.append("best_known.value is not finite")
        if not card.best_known.source.strip():
            problems.append("best_known.source is empty")
    if not card.validity.strip():
        problems.append("no 'validity' rules (state the checks and tolerances)")
    if not card.description.strip() or not card.objective.strip():
        problems.append("empty description or objective")
    if problems:
        return CheckResult("card", "fail", "; ".join(problems))
    bk = card.best_known
    assert bk is not None
    return CheckResult(
        "card",
        "pass",
        f"metric {card.metric!r}, best known {bk.value:g} "
        f"({card.direction}) from: {bk.source[:80]}",
    )


def _files_check(task: Task, entry: str | None) -> CheckResult:
    card = task.card
    problems: list[str] = []
    notes: list[str] = []
    seed = task.initial_program
    if seed is None:
        problems.append(f"the seed program {card.initial_program!r} does not exist")
    else:
        try:
            seed_funcs = _top_level_functions(seed)
        except SyntaxError as exc:
            seed_funcs = {}
            problems.append(f"the seed does not parse: {exc}")
        if entry and seed_funcs and entry not in seed_funcs:
            problems.append(f"the seed defines no top-level function {entry!r} (the entry point)")
        starts = seed.count("EVOLVE-BLOCK-START")
        ends = seed.count("EVOLVE-BLOCK-END")
        if starts != ends:
            problems.append(f"unbalanced EVOLVE-BLOCK markers ({starts} START, {ends} END)")
        elif starts == 0:
            notes.append("no EVOLVE-BLOCK markers: the whole seed is evolvable")
    evaluator = task.files.get(card.evaluator)
    if evaluator is None:
        problems.append(f"the evaluator {card.evaluator!r} does not exist")
    else:
        try:
            funcs = _top_level_functions(evaluator.decode("utf-8"))
        except (SyntaxError, UnicodeDecodeError) as exc:
            funcs = {}
            problems.append(f"the evaluator does not parse: {exc}")
        for stage in card.stages:
            func = funcs.get(stage.function)
            if func is None:
                problems.append(f"the evaluator defines no function {stage.function!r}")
            elif _required_args(func) != 1:
                problems.append(
                    f"{stage.function}() must take exactly one argument "
                    "(the candidate handle, or the program path in compat mode)"
                )
    if problems:
        return CheckResult("files", "fail", "; ".join(problems))
    detail = (
        f"entry point {entry!r}; stages {', '.join(s.function for s in card.stages)}; "
        f"files {', '.join(task.files)}"
    )
    return CheckResult("files", "pass", "; ".join([detail, *notes]))


# ------------------------------------------------------------------------------------------
# Sandbox checks.
# ------------------------------------------------------------------------------------------


def _failed(result: EvalResult) -> bool:
    return result.status != "ok" or is_failure(result.metrics, result.artifacts)


def _brief(result: EvalResult) -> str:
    if _failed(result):
        reason = result.error.strip().splitlines()[0] if result.error.strip() else ""
        return f"{result.status}: {reason[:160]}" if reason else result.status
    return f"{result.status}, combined_score={get_score(result.metrics):.6g}"


def _comparable(metrics: Mapping[str, Any]) -> dict[str, float]:
    return {k: v for k, v in numeric_metrics(metrics).items() if not _TIMING.search(k)}


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def _seed_check(task: Task, result: EvalResult) -> CheckResult:
    card = task.card
    data = {"duration_s": round(result.duration_s, 3), "metrics": dict(result.metrics)}
    if _failed(result):
        return CheckResult(
            "seed_evaluates", "fail", f"the seed program fails: {_brief(result)}", data
        )
    problems: list[str] = []
    nums = numeric_metrics(result.metrics)
    if "combined_score" not in nums:
        problems.append("no numeric 'combined_score' metric")
    required = (
        [] if card.mode == "compat" else ["validity", *([card.metric] if card.metric else [])]
    )
    for key in required:
        if key not in nums:
            problems.append(f"no numeric {key!r} metric")
    if "validity" in nums and nums["validity"] != 1.0:
        problems.append(f"validity is {nums['validity']:g}, expected 1.0")
    if result.duration_s > card.limits.wall_s:
        problems.append(f"took {result.duration_s:.1f} s, over the {card.limits.wall_s:g} s budget")
    bk = card.best_known
    if bk is not None and bk.combined_score is not None and "combined_score" in nums:
        if nums["combined_score"] > bk.combined_score * (1 + 1e-9) + 1e-12:
            problems.append(
                f"the seed scores {nums['combined_score']:.9g}, above the best known "
                f"{bk.combined_score:.9g}: is the normalisation right?"
            )
    if problems:
        return CheckResult("seed_evaluates", "fail", "; ".join(problems), data)
    extra = "" if card.mode == "sealed" else " (compat: 'validity' and the metric are optional)"
    return CheckResult(
        "seed_evaluates",
        "pass",
        f"combined_score={nums['combined_score']:.6g} in {result.duration_s:.2f} s "
        f"(budget {card.limits.wall_s:g} s){extra}",
        data,
    )


def _determinism_check(results: Sequence[EvalResult]) -> CheckResult:
    first = results[0]
    base = _comparable(first.metrics)
    for i, other in enumerate(results[1:], start=2):
        if other.status != first.status:
            return CheckResult(
                "deterministic", "fail", f"run 1 ended {first.status}, run {i} ended {other.status}"
            )
        metrics = _comparable(other.metrics)
        if set(metrics) != set(base):
            return CheckResult(
                "deterministic",
                "fail",
                f"run {i} reports metrics {sorted(metrics)}, run 1 {sorted(base)}",
            )
        diff = [k for k in base if not _same(base[k], metrics[k])]
        if diff:
            k = diff[0]
            return CheckResult(
                "deterministic",
                "fail",
                f"{k} differs between runs ({base[k]!r} vs {metrics[k]!r}); fix the seeds of "
                "every random choice in the evaluator and the seed program",
            )
    ignored = sorted(k for k in numeric_metrics(first.metrics) if _TIMING.search(k))
    note = f"; timing metrics not compared: {', '.join(ignored)}" if ignored else ""
    return CheckResult("deterministic", "pass", f"{len(results)} runs, identical metrics{note}")


def _variant_check(kind: str, result: EvalResult, seed_score: float) -> CheckResult:
    name = f"rejects_{kind}"
    what = VARIANTS[kind]
    data = {"status": result.status, "metrics": dict(result.metrics)}
    if _failed(result):
        return CheckResult(name, "pass", f"{what} → {_brief(result)}", data)
    score = get_score(result.metrics)
    worse = " — ABOVE the seed" if score > seed_score else ""
    if kind == "reads_task_files":
        tail = result.stderr_tail.strip().splitlines()[-1:] if result.stderr_tail else []
        return CheckResult(
            name,
            "fail",
            "a candidate could read the trusted task files "
            f"({tail[0][:200] if tail else 'path not reported'}); the sandbox leaks them",
            data,
        )
    return CheckResult(
        name,
        "fail",
        f"{what}, yet it scored as a success (combined_score={score:.6g}, seed "
        f"{seed_score:.6g}){worse}: the evaluator must reject it (validity 0 with an error)",
        data,
    )


def _lying_check(result: EvalResult, seed_score: float, scalars: int) -> CheckResult:
    name = "recomputes_reported"
    data = {"status": result.status, "metrics": dict(result.metrics), "scalars": scalars}
    if result.status not in ("ok", "invalid"):
        return CheckResult(
            name, "fail", f"inconclusive: the lying variant did not finish ({_brief(result)})", data
        )
    if is_failure(result.metrics, result.artifacts):
        return CheckResult(
            name,
            "pass",
            f"{scalars} reported scalar(s) inflated → rejected ({_brief(result)})",
            data,
        )
    score = get_score(result.metrics)
    if score > seed_score + 1e-12 * max(1.0, abs(seed_score)):
        return CheckResult(
            name,
            "fail",
            f"inflating the {scalars} scalar(s) the entry point reports raised combined_score "
            f"from {seed_score:.9g} to {score:.9g}: the evaluator trusts a reported value "
            "instead of recomputing it from the returned data",
            data,
        )
    return CheckResult(
        name,
        "pass",
        f"{scalars} reported scalar(s) inflated → combined_score "
        f"{score:.9g} (seed {seed_score:.9g}): recomputed",
        data,
    )


def _with_limits(task: Task, wall_s: float) -> Task:
    limits = task.card.limits.model_dump()
    limits["wall_s"] = wall_s
    card = task.card.model_copy(update={"limits": TaskLimits(**limits)})
    return replace(task, card=card)


async def _probe(task: Task, backend: SandboxBackend, entry: str, wall_s: float) -> EvalResult:
    job = Job(
        mode="sealed",
        function="evaluate",
        candidate=task.initial_program or "",
        files={"galapagos_check_probe.py": _PROBE.format(entry=entry).encode()},
        evaluator_module="galapagos_check_probe",
        limits=replace(task.card.limits.to_limits(), wall_s=wall_s),
        image=task.card.image,
        preload=task.card.preload,
    )
    return await backend.run(job)


async def check_task(
    target: str | os.PathLike[str] | Task,
    backend: SandboxBackend,
    *,
    runs: int = DEFAULT_RUNS,
    concurrency: int | None = None,
    evaluator_factory: EvaluatorFactory | None = None,
    progress: Callable[[CheckResult], None] | None = None,
) -> CheckReport:
    """Run every check on a task folder (or loaded task) with ``backend``; see the module doc.

    Raises :class:`~harness.core.errors.TaskError` when the folder is not a task at all.
    """
    task = target if isinstance(target, Task) else load_task(target)
    factory = evaluator_factory or _default_factory
    card = task.card
    # Jobs spend much of their time starting a sandbox, so a little oversubscription pays.
    limit = asyncio.Semaphore(concurrency or max(2, min(6, 2 * (os.cpu_count() or 1))))
    checks: list[CheckResult] = []

    def record(check: CheckResult) -> None:
        checks.append(check)
        if progress is not None:
            progress(check)

    def report() -> CheckReport:
        return CheckReport(
            task=card.name,
            path=str(task.path),
            mode=card.mode,
            sandbox=getattr(backend, "name", "?"),
            checks=tuple(checks),
        )

    entry = card.entry_point or (infer_entry_point(task) if card.mode == "compat" else None)
    record(_card_check(task))
    files = _files_check(task, entry)
    record(files)
    if files.status == "fail" or task.initial_program is None:
        record(CheckResult("seed_evaluates", "skip", "the static checks failed"))
        return report()

    evaluators: dict[str, TaskEvaluatorLike] = {}

    async def run(t: Task, code: str, label: str) -> EvalResult:
        key = f"{t.card.limits.wall_s}"
        if key not in evaluators:
            evaluators[key] = factory(t, backend)
        async with limit:
            return await evaluators[key].evaluate(code, program_id=f"check-{label}", iteration=0)

    try:
        return await _sandbox_checks(task, backend, entry, run, record, report, runs)
    finally:
        for evaluator in evaluators.values():
            close = getattr(evaluator, "aclose", None)
            if close is not None:
                await close()


async def _sandbox_checks(
    task: Task,
    backend: SandboxBackend,
    entry: str | None,
    run: Callable[[Task, str, str], Awaitable[EvalResult]],
    record: Callable[[CheckResult], None],
    report: Callable[[], CheckReport],
    runs: int,
) -> CheckReport:
    card = task.card
    seed_code = task.initial_program or ""
    short = _with_limits(task, min(card.limits.wall_s, HANG_WALL_S))
    isolated = getattr(backend, "name", "") not in UNISOLATED_BACKENDS
    jobs: dict[str, Awaitable[EvalResult]] = {
        f"seed-{i}": run(task, seed_code, f"seed-{i}") for i in range(1, max(runs, 2) + 1)
    }
    skipped: dict[str, str] = {}
    for kind in VARIANTS:
        if entry is None and kind != "syntax_error":
            skipped[kind] = "no entry point: the card names none and none could be inferred"
        elif kind in _ISOLATION_VARIANTS and card.mode == "compat":
            skipped[kind] = (
                "compat mode: the evaluator imports the candidate into its own "
                "process, so isolation from it cannot be checked"
            )
        elif kind in _ISOLATION_VARIANTS and not isolated:
            skipped[kind] = (
                f"the {backend.name!r} backend does not isolate the candidate "
                "(run with --sandbox docker)"
            )
        else:
            code = variant_source(seed_code, entry or "", kind, task_files=task.files)
            jobs[kind] = run(short if kind in _HANGING_VARIANTS else task, code, kind)
    lie_skip = _lie_precondition(seed_code, entry)
    if not lie_skip:
        # Counts the scalars in the seed's answer: the lying variant needs at least one.
        jobs["probe"] = _probe(task, backend, entry or "", card.limits.wall_s)

    # Everything at once (the seed's own runs too): when the seed fails, the rest is discarded,
    # which costs a little in that rare case and saves a seed's run time in every other.
    results = dict(zip(jobs, await asyncio.gather(*jobs.values()), strict=True))
    seed_runs = [results[f"seed-{i}"] for i in range(1, max(runs, 2) + 1)]
    record(_seed_check(task, seed_runs[0]))
    if _failed(seed_runs[0]):
        for name in ("deterministic", *(f"rejects_{k}" for k in VARIANTS), "recomputes_reported"):
            record(CheckResult(name, "skip", "the seed does not evaluate"))
        return report()
    seed_score = get_score(seed_runs[0].metrics)

    scalars = 0
    lie: EvalResult | None = None
    if "probe" in results:
        answer = results["probe"]
        scalars = -1 if _failed(answer) else int(numeric_metrics(answer.metrics).get("scalars", 0))
        if scalars < 0:
            lie_skip = f"could not inspect the seed's answer ({_brief(answer)})"
        elif scalars == 0:
            lie_skip = f"{entry}() returns only arrays: there is no reported value to inflate"
        else:
            lie = await run(task, lying_source(seed_code, entry or "", card.direction), "lying")

    record(_determinism_check(seed_runs))
    for kind in VARIANTS:
        if kind in skipped:
            record(CheckResult(f"rejects_{kind}", "skip", skipped[kind]))
        else:
            record(_variant_check(kind, results[kind], seed_score))
    if lie is None:
        record(CheckResult("recomputes_reported", "skip", lie_skip))
    else:
        record(_lying_check(lie, seed_score, scalars))
    return report()


def _lie_precondition(seed: str, entry: str | None) -> str:
    """Why the lying variant cannot apply to this entry point ("" when it can)."""
    func = _top_level_functions(seed).get(entry or "")
    if entry is None or func is None:
        return "no entry point to wrap"
    if _required_args(func) > 0:
        return (
            f"{entry}() takes arguments: it answers the scorer's questions and reports "
            "no value of its own to inflate"
        )
    return ""
