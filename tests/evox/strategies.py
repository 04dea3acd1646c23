"""Strategy modules for tests: a well-behaved base and one twist per Valid(·) check.

``module(...)`` fills the base with replacement code for the parts a twist changes.  Each entry
of :data:`FAILS_EXACTLY` is a strategy that passes every check before the named one and fails
that one (the suite stops at the first failure).
"""

from __future__ import annotations

BASE = '''
import random
from dataclasses import dataclass

from skydiscover.config import DatabaseConfig
from skydiscover.search.base_database import Program, ProgramDatabase
{imports}

@dataclass
class EvolvedProgram(Program):
    """Test strategy program."""


class EvolvedProgramDatabase(ProgramDatabase):
    def __init__(self, name: str, config: DatabaseConfig):
        super().__init__(name, config)
        self._n = 0
{init}
    def add(self, program, iteration=None, **kwargs) -> str:
{add}        self.programs[program.id] = program
        return {returned}

    def sample(self, num_context_programs=4, **kwargs):
        self._n += 1
        pool = list(self.programs.values())
{sample}        if not pool:
            raise ValueError("No candidates available for sampling")
        parent = random.choice(pool)
        others = [p for p in pool if p.id != parent.id]
        context = {context}
        return {{{label}: parent}}, {{"": context}}
'''


def _block(code: str) -> str:
    return "".join(f"        {line}\n" for line in code.strip("\n").split("\n")) if code else ""


def module(
    *,
    imports: str = "",
    init: str = "",
    add: str = "",
    sample: str = "",
    returned: str = "program.id",
    context: str = "random.sample(others, min(num_context_programs or 0, len(others)))",
    label: str = '""',
) -> str:
    return BASE.format(
        imports=imports,
        init=_block(init),
        add=_block(add),
        sample=_block(sample),
        returned=returned,
        context=context,
        label=label,
    )


GOOD = module()

FAILS_EXACTLY: dict[str, str] = {
    "load": module(imports="raise RuntimeError('broken at import')"),
    "structure": GOOD.replace(
        "def sample(self, num_context_programs=4", "def sample(self, k=4"
    ).replace("num_context_programs or 0", "k"),
    "construct": module(init="raise ValueError('cannot construct')"),
    "single_add": module(returned="'id-' + program.id"),
    "bulk_add_sample": module(context="others"),
    "error_metrics": module(add="float(program.metrics.get('error', 0.0))"),
    "metric_immutability": module(
        add="if 'correlation' in program.metrics:\n    program.metrics['correlation'] = 0.0"
    ),
    "migration": module(
        sample="pool = [p for p in pool if isinstance(p, EvolvedProgram)]\n"
        "if not pool:\n    raise ValueError('No candidates to sample')"
    ),
    "context_contract": module(
        context="others[: (num_context_programs or 0) + (1 if self._n > 15 else 0)]"
    ),
    "empty_population": module(
        sample="if not pool:\n    return {'': EvolvedProgram(id='ghost', solution='')}, {'': []}"
    ),
    "single_program": module(context="random.sample(pool, min(num_context_programs, len(pool)))"),
    "parent_not_in_context": module(
        context="random.sample(pool, min(num_context_programs, len(pool))) if len(pool) > 1 else []"
    ),
    "labels": module(label='"Top candidate"'),
    "failed_metrics": module(
        sample="best = max(pool, key=lambda p: p.metrics['combined_score']) if pool else None"
    ),
    "determinism": module(
        imports="_INSTANCES = [0]",
        init="_INSTANCES[0] += 1\nself._rng = random.Random(_INSTANCES[0])",
        context="self._rng.sample(others, min(num_context_programs or 0, len(others)))",
    ),
    "stress": module(sample="if len(pool) > 100:\n    raise RuntimeError('too many programs')"),
    "call_time": module(
        imports="import time",
        init="self._slow = True",
        sample="if self._slow and len(pool) > 150:\n    self._slow = False\n"
        "    end = time.process_time() + 2.0\n    while time.process_time() < end:\n        pass",
    ),
    "memory": module(
        init="self._ballast = None",
        sample="if self._ballast is None and len(pool) > 150:\n"
        "    self._ballast = b'x' * (120 << 20)",
    ),
    "threads": module(
        imports="import threading",
        init="self._idle = threading.Event()\nself._threads = []",
        sample="if not self._threads and len(pool) > 150:\n"
        "    for _ in range(8):\n"
        "        t = threading.Thread(target=self._idle.wait, daemon=True)\n"
        "        t.start()\n"
        "        self._threads.append(t)",
    ),
}

#: Raises in ``sample`` once it has seen ``{fuse}`` real (long) programs *after* it started
#: sampling: it passes Valid(·) (whose solutions are one-liners) and fails at run time.
RAISES_IN_SAMPLE_LATER = module(
    init="self._sampling = False\nself._armed = 0",
    add="if self._sampling and program.solution.count(chr(10)) >= 8:\n    self._armed += 1",
    sample="self._sampling = True\nif self._armed >= {fuse}:\n"
    "    raise RuntimeError('latent bug in sample()')",
)

#: Edges of the context contract where the references part (compared with HEAD's golden trace):
#: five context programs when four are asked for (0.1.0's bulk check allows min(5, n), HEAD's
#: and ours min(4, n)), and one program repeated as the whole context.
BOUNDARY: dict[str, str] = {
    "five_context": module(
        context="others[: 5 if num_context_programs >= 4 else num_context_programs]"
    ),
    "duplicate_context": module(
        context="[others[0]] * min(num_context_programs or 0, len(others)) if others else []"
    ),
}
