"""The static pre-filter: what a strategy may write, and the readable reasons when it may not."""

from __future__ import annotations

import pytest

from harness.evox.prefilter import ALLOWED_IMPORTS, prefilter
from harness.evox.seed import seed_source

ORDINARY = """
import math
import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Dict, List, Optional
import numpy as np

from skydiscover.config import DatabaseConfig
from skydiscover.search.base_database import Program, ProgramDatabase


@dataclass
class EvolvedProgram(Program):
    tags: List[str] = field(default_factory=list)

    def __post_init__(self):
        self._seen = 0


class EvolvedProgramDatabase(ProgramDatabase):
    def __init__(self, name: str, config: DatabaseConfig):
        super().__init__(name, config)
        self._uses: Dict[str, int] = defaultdict(int)
        self._best: float = float("-inf")

    def _helper(self, p) -> float:
        v = p.metrics.get("combined_score")
        return float(v) if isinstance(v, (int, float)) else 0.0

    def add(self, program, iteration=None, **kwargs):
        self.programs[program.id] = program
        self._uses[program.id] += 1
        self._best = max(self._best, self._helper(program))
        info = getattr(program, "parent_info", None)
        return program.id

    def sample(self, num_context_programs: Optional[int] = 4, **kwargs):
        pool = list(self.programs.values())
        weights = np.array([self._helper(p) for p in pool]) + 1e-9
        parent = pool[int(np.random.choice(len(pool), p=weights / weights.sum()))]
        print(type(self).__name__, len(pool))
        return {"": parent}, {"": [p for p in pool if p.id != parent.id][:num_context_programs]}
"""


def test_the_seed_strategy_and_ordinary_llm_code_pass() -> None:
    assert prefilter(seed_source()).ok
    result = prefilter(ORDINARY)
    assert result.ok, result.reason()
    assert result.reason() == ""


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import os\n", "import of 'os' is not allowed (operating-system access)"),
        ("import socket\n", "import of 'socket' is not allowed (network access)"),
        ("import subprocess\n", "import of 'subprocess' is not allowed"),
        ("from ctypes import CDLL\n", "import of 'ctypes' is not allowed"),
        ("import importlib\n", "import of 'importlib' is not allowed"),
        ("import time\n", "wall-clock time"),
        ("from . import x\n", "relative imports are not allowed"),
        ("x = eval('1')\n", "'eval' is not allowed"),
        ("exec('x = 1')\n", "'exec' is not allowed"),
        ("f = open('/etc/passwd')\n", "'open' is not allowed"),
        ("m = __import__('os')\n", '"__import__" is an invalid variable name'),
        ("g = globals()\n", "'globals' is not allowed"),
        ("setattr(x, 'a', 1)\n", "'setattr' is not allowed"),
        ("v = getattr(x, name)\n", "getattr() needs a literal attribute name"),
        ("v = getattr(x, '__class__')\n", "getattr() of the dunder '__class__'"),
        ("c = ().__class__.__bases__\n", '"__class__" is an invalid attribute name'),
        ("b = __builtins__\n", "'__builtins__' is not allowed"),
        ("import numpy as np\nnp.load('x.npy')\n", "'numpy.load' is not allowed"),
        ("import numpy\nnumpy.fromfile('f')\n", "'numpy.fromfile' is not allowed"),
        ("import numpy as np\nf = np.ctypeslib\n", "'numpy.ctypeslib' is not allowed"),
        ("from numpy import memmap\n", "'numpy.memmap' is not allowed"),
        ("import numpy as np\nnp.allclose = None\n", "assigning to 'numpy.allclose'"),
        ("import random\nrandom.random = lambda: 0\n", "assigning to 'random.random'"),
        ("a.tofile('x')\n", "'.tofile' is not allowed"),
        ("import logging\nlogging.FileHandler('x')\n", "'logging.FileHandler' is not allowed"),
        ("def f(:\n", "syntax error"),
        # What an allowed module leads to (resolved on the host): the review's bypasses.
        ("import logging\nlogging.os.system('x')\n", "'logging.os' is the module 'os'"),
        ("import dataclasses\nm = dataclasses.sys.modules\n", "'dataclasses.sys' is the module"),
        ("import random\ne = random._os.environ\n", "'random._os' is a private attribute"),
        ("import collections\nm = collections._sys\n", "'collections._sys' is a private"),
        ("from random import _os\n", "'random._os' is a private attribute"),
        ("from logging import FileHandler\n", "'logging.FileHandler' is not allowed"),
        ("from typing import sys\n", "'typing.sys' is the module 'sys'"),
        ("from math import *\n", "'from math import *' is not allowed"),
        ("import numpy as np\nf = getattr(np, 'fromfile')\n", "'numpy.fromfile' is not allowed"),
        ("import logging\nm = getattr(logging, 'os')\n", "'logging.os' is the module 'os'"),
        ("import numpy as np\nc = np.core\n", "'numpy.core' is the module"),
        (
            "import operator\ng = operator.attrgetter('__globals__')(f)\n",
            "operator.attrgetter() needs literal, public attribute names",
        ),
        ("import operator\ng = operator.attrgetter(name)\n", "needs literal, public"),
        ("from operator import methodcaller\nm = methodcaller('_x')\n", "needs literal, public"),
        ("from operator import attrgetter as a\nget = a\n", "may only be called directly"),
    ],
)
def test_each_rule_rejects_with_a_readable_reason(source: str, expected: str) -> None:
    result = prefilter(source)
    assert not result.ok
    assert expected in result.reason()
    assert "Strategies may import only:" in result.reason()


def test_reasons_carry_line_numbers() -> None:
    result = prefilter("import math\n\n\nimport os\n")
    assert [f.line for f in result.findings] == [4]
    assert "line 4:" in result.reason()


def test_single_underscore_names_are_allowed_but_not_dunders() -> None:
    assert prefilter("class A:\n    def _h(self):\n        self._c = 1\n        _tmp = 2\n").ok
    assert not prefilter("class A:\n    def f(self):\n        return self.__dict__\n").ok
    assert not prefilter("x = y.__globals__\n").ok


def test_annotated_and_augmented_assignments_pass() -> None:
    source = (
        "class A:\n    def f(self):\n        n: int = 0\n        self.n += 1\n        d[k] += 1\n"
    )
    assert prefilter(source).ok


def test_imports_are_limited_to_the_allow_list() -> None:
    for name in ALLOWED_IMPORTS - {"__future__"}:
        assert prefilter(f"import {name}\n").ok, name
    assert prefilter("from __future__ import annotations\n").ok
    assert not prefilter("import pickle\n").ok
    assert not prefilter("import numpy.lib\n").ok
    assert prefilter("import pickle\n", allowed_imports={"pickle"}).ok


def test_oversized_sources_are_refused_without_parsing() -> None:
    result = prefilter("x = 1\n" * 50_000)
    assert not result.ok and "characters" in result.reason()


def test_public_module_api_and_literal_getters_pass() -> None:
    source = (
        "import collections\nimport numpy as np\nimport operator\n"
        "from operator import attrgetter, itemgetter\n"
        "rng = np.random.default_rng(0)\nv = np.linalg.norm(np.ones(2))\n"
        "m = collections.abc.Mapping\nd = collections.defaultdict(list)\n"
        "key = attrgetter('score', 'meta.iteration')\nk2 = itemgetter(0)\n"
        "call = operator.methodcaller('get', '__not_a_name__')\n"
        "e = getattr(np, 'pi')\n"
    )
    assert prefilter(source).ok, prefilter(source).reason()
