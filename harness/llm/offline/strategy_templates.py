"""Strategy modules the offline model assembles: a few parent/context/label rules, plus faults.

A :class:`Variant` names one rule of each kind and its parameter; :func:`render` turns it (and
an optional fault from :mod:`harness.llm.offline.strategy_faults`) into a complete strategy
module that imports only what the pre-filter allows.  The variant is written into the module
as a ``# offline-variant:`` comment so the next rewrite can mutate it instead of starting over.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import asdict, dataclass, replace

__all__ = ["Variant", "parse_variant", "random_variant", "mutate_variant", "render"]

PARENT_RULES = {
    "uniform": "return random.choice(pool)",
    "tournament": "entrants = random.sample(pool, min(int({p}), len(pool)))\n"
    "return max(entrants, key=_score)",
    "top_fraction": "ranked = sorted(pool, key=_score, reverse=True)\n"
    "return random.choice(ranked[: max(1, int(len(ranked) * {p}))])",
    "recency": "weights = [{p} ** (len(pool) - 1 - i) for i in range(len(pool))]\n"
    "return random.choices(pool, weights=weights, k=1)[0]",
    "epsilon_best": "if random.random() < {p}:\n    return random.choice(pool)\n"
    "return max(pool, key=_score)",
}
PARENT_PARAMS: dict[str, list[float]] = {
    "uniform": [0],
    "tournament": [2, 3, 4],
    "top_fraction": [0.2, 0.3, 0.5],
    "recency": [0.9, 0.95],
    "epsilon_best": [0.1, 0.2, 0.3],
}
CONTEXT_RULES = {
    "random": "return random.sample(others, min(k, len(others)))",
    "top": "return sorted(others, key=_score, reverse=True)[:k]",
    "recent": "return others[-k:] if k else []",
    "mixed": "chosen = sorted(others, key=_score, reverse=True)[: k // 2]\n"
    "taken = {p.id for p in chosen}\n"
    "rest = [p for p in others if p.id not in taken]\n"
    "return chosen + random.sample(rest, min(k - len(chosen), len(rest)))",
}
LABEL_RULES = {
    "none": 'return ""',
    "stagnation": "if self._stale >= {p} and random.random() < 0.5:\n"
    "    return self.DIVERGE_LABEL\n"
    "if random.random() < 0.2:\n    return self.REFINE_LABEL\n"
    'return ""',
}
LABEL_PARAMS: dict[str, list[float]] = {"none": [0], "stagnation": [3, 5, 8]}
_VARIANT_RE = re.compile(r"^# offline-variant: (\{.*\})$", re.MULTILINE)
LONG_SOLUTION = 8  # lines; longer than every Valid(·) fixture, shorter than real programs


@dataclass(frozen=True)
class Variant:
    parent: str = "uniform"
    parent_param: float = 0
    context: str = "random"
    label: str = "none"
    label_param: float = 0

    def describe(self) -> str:
        p = f"{self.parent}({self.parent_param:g})" if self.parent != "uniform" else "uniform"
        lab = f"stagnation({self.label_param:g})" if self.label == "stagnation" else "none"
        return f"parent={p}, context={self.context}, labels={lab}"


def random_variant(rng: random.Random) -> Variant:
    parent = rng.choice(sorted(PARENT_RULES))
    label = rng.choice(sorted(LABEL_RULES))
    return Variant(
        parent,
        rng.choice(PARENT_PARAMS[parent]),
        rng.choice(sorted(CONTEXT_RULES)),
        label,
        rng.choice(LABEL_PARAMS[label]),
    )


def mutate_variant(variant: Variant, rng: random.Random) -> Variant:
    """Change one rule (with a fresh parameter) or one parameter."""
    what = rng.choice(["parent", "context", "label", "param"])
    if what == "parent":
        parent = rng.choice(sorted(PARENT_RULES))
        return replace(variant, parent=parent, parent_param=rng.choice(PARENT_PARAMS[parent]))
    if what == "context":
        return replace(variant, context=rng.choice(sorted(CONTEXT_RULES)))
    if what == "label":
        label = rng.choice(sorted(LABEL_RULES))
        return replace(variant, label=label, label_param=rng.choice(LABEL_PARAMS[label]))
    return replace(variant, parent_param=rng.choice(PARENT_PARAMS[variant.parent]))


def parse_variant(code: str) -> Variant | None:
    found = _VARIANT_RE.search(code)
    if not found:
        return None
    try:
        return Variant(**json.loads(found.group(1)))
    except (TypeError, ValueError):
        return None


def _indent(code: str, spaces: int) -> str:
    pad = " " * spaces
    return "\n".join(pad + line if line else line for line in code.split("\n"))


def _fault_parts(fault: str | None, fuse: int) -> dict[str, str]:
    """Extra code per hook for one fault kind (empty strings when there is none)."""
    arm = (
        f"if self._sampling and program.solution.count('\\n') >= {LONG_SOLUTION}:\n"
        "    self._armed += 1\n"
    )
    parts = {"imports": "", "init": "", "add": "", "sample": "", "answer": ""}
    if fault in ("crash_sample", "crash_add", "hang", "alloc"):
        parts["init"] = "self._sampling = False\nself._armed = 0\n"
        parts["add"] = arm
        parts["sample"] = "self._sampling = True\n"
    if fault == "crash_add":
        parts["add"] += (
            f"if self._armed >= {fuse}:\n"
            "    raise RuntimeError('offline fault injection: add() crashes')\n"
        )
    elif fault == "crash_sample":
        parts["sample"] += (
            f"if self._armed >= {fuse}:\n"
            "    raise RuntimeError('offline fault injection: sample() crashes')\n"
        )
    elif fault == "hang":
        parts["sample"] += f"while self._armed >= {fuse}:\n    self._armed += 1\n"
    elif fault == "alloc":
        parts["sample"] += (
            f"if self._armed >= {fuse}:\n    hog = []\n    while True:\n"
            "        hog.append(bytearray(1 << 24))\n"
        )
    elif fault == "fabricate":
        parts["answer"] = (
            "parent = EvolvedProgram(id='fabricated-%d' % random.randrange(10**6), solution='')\n"
        )
    elif fault == "excess_context":
        parts["answer"] = "context = list(others)\n"
    elif fault == "read_env":
        parts["imports"] = "import os\n"
        parts["init"] = "self._env = dict(os.environ)\n"
    elif fault == "read_files":
        parts["init"] = "with open('/etc/hostname') as handle:\n    self._host = handle.read()\n"
    elif fault == "network":
        parts["imports"] = "import socket\n"
        parts["sample"] = "socket.create_connection(('192.0.2.1', 80), timeout=1).close()\n"
    return parts


TEMPLATE = '''# EVOLVE-BLOCK-START
"""Search strategy (offline model variant): {description}."""
# offline-variant: {variant}

import math
import random
from dataclasses import dataclass
{imports}
from skydiscover.config import DatabaseConfig
from skydiscover.search.base_database import Program, ProgramDatabase


def _score(program) -> float:
    value = program.metrics.get("combined_score")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return float("-inf")


@dataclass
class EvolvedProgram(Program):
    """Programs as this strategy stores them."""


class EvolvedProgramDatabase(ProgramDatabase):
    def __init__(self, name: str, config: DatabaseConfig):
        super().__init__(name, config)
        self._order = []  # ids in arrival order
        self._best = float("-inf")
        self._stale = 0  # adds since the best improved by more than 0.01
{init}
    def add(self, program, iteration=None, **kwargs) -> str:
{add}        if program.id not in self.programs:
            self._order.append(program.id)
        self.programs[program.id] = program
        score = _score(program)
        self._stale = 0 if score > self._best + 0.01 else self._stale + 1
        self._best = max(self._best, score)
        if iteration is not None:
            self.last_iteration = max(self.last_iteration, iteration)
        return program.id

    def _pick_parent(self, pool):
{parent_rule}

    def _pick_context(self, others, k):
{context_rule}

    def _label(self):
{label_rule}

    def sample(self, num_context_programs=4, **kwargs):
{sample}        pool = [self.programs[pid] for pid in self._order if pid in self.programs]
        if not pool:
            raise ValueError("no programs to sample")
        parent = self._pick_parent(pool)
        others = [p for p in pool if p.id != parent.id]
        context = self._pick_context(others, max(0, num_context_programs or 0))
{answer}        return {{self._label(): parent}}, {{"": context}}


# EVOLVE-BLOCK-END
'''


def render(variant: Variant, fault: str | None = None, fuse: int = 3) -> str:
    parts = _fault_parts(fault, fuse)
    return TEMPLATE.format(
        description=variant.describe(),
        variant=json.dumps(asdict(variant), sort_keys=True),
        imports=parts["imports"],
        init=_indent(parts["init"], 8) + ("\n" if parts["init"] else ""),
        add=_indent(parts["add"], 8),
        sample=_indent(parts["sample"], 8),
        answer=_indent(parts["answer"], 8),
        parent_rule=_indent(PARENT_RULES[variant.parent].format(p=variant.parent_param), 8),
        context_rule=_indent(CONTEXT_RULES[variant.context], 8),
        label_rule=_indent(LABEL_RULES[variant.label].format(p=int(variant.label_param)), 8),
    )
