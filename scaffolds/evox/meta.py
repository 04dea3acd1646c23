"""The strategy-rewrite prompt (meta side) and reading a strategy out of the answer.

The prompt is our own wording of the reference's (§2.6.2, §2.6.8): the contract a strategy
module must meet, the scoring objective, the problem, the search window, the population-state
descriptor, other strategies with their J, failed attempts of this rewrite, and — last, in the
last fenced block, where the offline model looks — the strategy to rewrite.  The call's
purpose (``strategy``), not this text, is what routes it to the offline model's strategy
responder.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from harness.core.records import Prompt
from harness.diffs import extract_code, fenced, find_fences
from scaffolds.evox.descriptor import describe_change
from scaffolds.evox.history import StrategyRecord
from scaffolds.evox.prefilter import ALLOWED_IMPORTS

__all__ = ["MARKER", "build_prompt", "read_strategy"]

MARKER = "# EvoX search-strategy rewrite"
TASK_CHARS = 4000
OTHER_CHARS = 6000

SYSTEM = f"""{MARKER}

You write the *search strategy* of an evolutionary program search: a Python module whose class
decides which solution program is mutated next (the parent), which earlier programs the model
sees as context, and whether to ask for a different approach or a refinement.

## Contract (the module is rejected if it breaks any of this)
- Define `@dataclass class EvolvedProgram(Program)` and
  `class EvolvedProgramDatabase(ProgramDatabase)`, importing both bases with
  `from skydiscover.search.base_database import Program, ProgramDatabase` and the config with
  `from skydiscover.config import DatabaseConfig`.
- `__init__(self, name: str, config: DatabaseConfig)` calls `super().__init__(name, config)` and
  initialises every attribute `add`/`sample` use.
- `add(self, program, iteration=None, **kwargs) -> str` stores the program in `self.programs`
  (id -> program) and returns `program.id`. Track progress state here.
- `sample(self, num_context_programs=4, **kwargs)` returns
  `({{label: parent}}, {{"": [context programs]}})`: exactly one parent, at most
  `num_context_programs` context programs, all of them programs you were given via `add`, the
  parent never among its own context, no program twice.
- Parent label: "" by default; `self.DIVERGE_LABEL` to ask for a fundamentally different
  approach, `self.REFINE_LABEL` to ask for refinement of the parent's approach — only when the
  population warrants it. Context labels are always "".
- Never modify `program.metrics`; check `isinstance(value, (int, float))` before arithmetic:
  metrics may be missing, None, NaN or strings (errors). `self.get(id)`, `self.programs`,
  `self.get_best_program()`, `self.get_top_programs(n)` are available.
- Programs are not hashable: key dicts and sets by `program.id`.
- Be deterministic: use the module `random` (or `numpy.random`, or an RNG seeded in
  `__init__`); never time, object ids or hash order. The host seeds `random` for you.
- Imports allowed: {", ".join(sorted(ALLOWED_IMPORTS))} — and only their usual public
  names (numpy: array maths, statistics, sorting, `numpy.random`, `numpy.linalg`). No files, no
  network, no `eval`/`exec`, no threads. No dunders at all (not `type(self).__name__`, not
  `obj.__dict__`; `super().__init__(...)` is fine), no metaclasses, `type(x)` only compared
  with `is` (or with `==`/`in` against a class), `getattr`/`hasattr` only called directly with
  a literal name, `.format()` only on a string literal with plain fields (prefer f-strings),
  `_underscore` attributes only on `self`/`cls`. Use a module only as `module.name` (never
  `m = module`), and never assign to anything of a module.
- The module runs in a locked-down sandbox with a deadline per call and a memory limit; keep
  `add`/`sample` fast (well under 100 ms at 1,000 programs).

## Objective
Strategies are scored on the improvement of the best solution score during their window:
J = (best_end - best_start) * (1 + ln(1 + max(0, best_start))) / sqrt(window).
Only improvements above 0.01 absolute count as progress.
"""


def _task(text: str) -> str:
    return text if len(text) <= TASK_CHARS else text[:TASK_CHARS] + "\n…"


def _score(record: StrategyRecord) -> str:
    m = record.metrics
    if "combined_score" not in m:
        return "not scored yet"
    return (
        f"J = {record.score:.6f} (best {m.get('search_window_start_score', 0):.4f} -> "
        f"{m.get('search_window_end_score', 0):.4f} over {m.get('steps', '?')} iterations)"
    )


def build_prompt(
    *,
    parent: StrategyRecord,
    others: Sequence[StrategyRecord],
    task: str,
    window: str,
    population: str,
    failures: Sequence[str] = (),
    problem_summary: str = "",
    outcomes: Mapping[str, str] | None = None,
    population_is_insight: bool = False,
) -> Prompt:
    parts = ["# Problem the solutions solve", _task(task) or "(no description)", ""]
    if problem_summary:
        parts += ["## Problem summary (guide model)", problem_summary, ""]
    parts += ["# Search window", window, "", "# Solution population now"]
    if population_is_insight:
        parts += ["## Population insight (guide model, from the statistics)"]
    parts += [population, ""]
    if others:
        parts.append("# Other strategies tried before")
        for record in others:
            code = (
                record.source
                if len(record.source) <= OTHER_CHARS
                else (record.source[:OTHER_CHARS] + "\n# …")
            )
            parts += [f"## Strategy {record.id}: {_score(record)}", fenced(code)]
            change = (outcomes or {}).get(record.id) or describe_change(
                record.start_state, record.end_state
            )
            if change:
                parts += ["How the population changed while it was active:", change]
            parts.append("")
    if failures:
        parts.append("# Failed attempts at this rewrite (fix these problems)")
        parts += [f"## Attempt {i + 1}\n{text}" for i, text in enumerate(failures)]
        parts.append("")
    parts += [
        "# Your task",
        "Rewrite the current strategy below so the best solution score improves faster from "
        "this population state. Keep it simple. Answer with the complete module in one "
        "```python fenced block.",
    ]
    parts += [
        "",
        f"# Current strategy {parent.id}: {_score(parent)}",
        fenced(parent.source),
    ]
    return Prompt(system=SYSTEM, user="\n".join(parts) + "\n", kind="strategy")


def read_strategy(response: str) -> str | None:
    """The module in the answer (first python fence, else first fence); None without one."""
    if not find_fences(response):
        return None
    code = extract_code(response, "python")
    return code if code.strip() else None
